// Package deps pins the modules the packages are being written against
// while the tree is young. It is removed once every dependency is imported
// by real code.
package deps

import (
	_ "github.com/apache/arrow-go/v18/arrow"
	_ "github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/apache/iceberg-go"
	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/io/gocloud/s3"
	_ "github.com/apache/iceberg-go/table"
	_ "github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/peterbourgon/ff/v3"
	_ "github.com/pressly/goose/v3"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/stretchr/testify/require"
	_ "github.com/twmb/franz-go/pkg/kadm"
	_ "github.com/twmb/franz-go/pkg/kfake"
	_ "github.com/twmb/franz-go/pkg/kgo"
	_ "golang.org/x/sync/singleflight"
	_ "gopkg.in/yaml.v3"
)
