package devenv

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pglocal"
	"github.com/minkhq/mink/node"
	"github.com/minkhq/mink/schemas"
)

// Env is a running development environment.
type Env struct {
	Postgres *pglocal.Postgres
	Kafka    *kfake.Cluster // nil with an external Kafka
	Brokers  []string
	// KafkaOpts reach an external Kafka (seeds, TLS, SASL:
	// kafka.Config.ClientOpts); nil for the in-process one.
	KafkaOpts []kgo.Opt
	// Registry is the in-process Schema Registry (nil with an external
	// one); RegistryURL is the one every node uses.
	Registry    *srfake.Registry
	RegistryURL string
	Nodes       []*node.Node
	// Credential is an admin principal's "CLIENT_ID:SECRET" under
	// DevConfig.Principals; empty under auth none.
	Credential string

	cacheRoot string
}

// Stop stops the nodes, the registry, Kafka and PostgreSQL, in that order.
func (e *Env) Stop() {
	// In parallel: stopped one by one, each would hand its leases to the
	// next only for it to stop too.
	var wg sync.WaitGroup
	for _, n := range e.Nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.Stop() }()
	}
	wg.Wait()
	if e.Registry != nil {
		e.Registry.Close()
	}
	if e.Kafka != nil {
		e.Kafka.Close()
	}
	if e.Postgres != nil {
		e.Postgres.Stop()
	}
	if e.cacheRoot != "" {
		_ = os.RemoveAll(e.cacheRoot)
	}
}

// StartEnv starts PostgreSQL, Kafka and a Schema Registry (each unless
// given), and the nodes.
func StartEnv(ctx context.Context, cfg DevConfig) (_ *Env, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// env is not the named result: every `return nil, err` below must still
	// let this deferred cleanup stop what was started.
	env := &Env{}
	defer func() {
		if err != nil {
			env.Stop()
		}
	}()
	pgURL := cfg.PostgresURL
	if pgURL == "" {
		if env.Postgres, err = pglocal.StartPostgres(ctx); err != nil {
			return nil, err
		}
		pgURL = env.Postgres.URL
	}
	env.Brokers = cfg.Kafka
	if len(env.Brokers) > 0 {
		if env.KafkaOpts, err = cfg.kafka().ClientOpts(); err != nil {
			return nil, err
		}
	} else {
		if env.Kafka, err = kfake.NewCluster(kfake.NumBrokers(1)); err != nil {
			return nil, fmt.Errorf("devenv: kafka: %w", err)
		}
		env.Brokers = env.Kafka.ListenAddrs()
	}
	env.RegistryURL = cfg.SchemaRegistry
	if env.RegistryURL == "" {
		// srfake listens on 127.0.0.1 (httptest), on a free port.
		env.Registry = srfake.New()
		env.RegistryURL = env.Registry.URL()
	}
	cacheRoot, err := os.MkdirTemp("", "mink-dev-cache-")
	if err != nil {
		return nil, err
	}
	env.cacheRoot = cacheRoot
	mode := auth.ModeNone
	if cfg.Principals {
		mode = auth.ModePrincipals
	}
	for i := 0; i < cfg.Nodes; i++ {
		listen := fmt.Sprintf("127.0.0.1:%d", cfg.BasePort+i)
		if cfg.EphemeralPorts {
			listen = "127.0.0.1:0"
		}
		n, err := node.Start(ctx, node.Config{
			PostgresURL:        pgURL,
			KafkaBrokers:       env.Brokers,
			KafkaTLS:           cfg.KafkaTLS,
			KafkaSASL:          cfg.KafkaSASL,
			Listen:             listen,
			NodeID:             fmt.Sprintf("dev-%d", i+1),
			LeaseTTL:           cfg.LeaseTTL,
			CacheDir:           fmt.Sprintf("%s/node-%d", cacheRoot, i+1),
			CacheSize:          NodeCacheSize,
			FlushInterval:      cfg.FlushInterval,
			CommitInterval:     cfg.CommitInterval,
			StatisticsInterval: cfg.StatisticsInterval,
			SchemaRegistry:     schemas.RegistryConfig{URL: env.RegistryURL},
			Auth:               mode,
			Logger:             cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		env.Nodes = append(env.Nodes, n)
	}
	if cfg.Principals {
		if env.Credential, err = env.CreatePrincipal(ctx, "dev-admin", true); err != nil {
			return nil, err
		}
	}
	return env, nil
}

// CreatePrincipal creates a principal named name (or name-<random>, when
// name is taken: a database kept from an earlier run) with grants, an
// admin when admin, and returns its "CLIENT_ID:SECRET". The environment
// must run under DevConfig.Principals.
func (e *Env) CreatePrincipal(ctx context.Context, name string, admin bool, grants ...string) (string, error) {
	a := e.Nodes[0].Auth()
	if a == nil {
		return "", errors.New("devenv: the nodes run under auth none")
	}
	n := name
	for range 3 {
		id, secret, err := a.Store().Create(ctx, n, grants, admin)
		if errors.Is(err, auth.ErrExists) {
			var b [3]byte
			_, _ = rand.Read(b[:])
			n = name + "-" + hex.EncodeToString(b[:])
			continue
		}
		if err != nil {
			return "", fmt.Errorf("devenv: principal %s: %w", name, err)
		}
		return id + ":" + secret, nil
	}
	return "", fmt.Errorf("devenv: principal %s: every name taken", name)
}

// Dev runs `mink dev` until ctx is done: the environment, topic
// `earthquakes` (3 partitions) filled with the USGS feed, and table
// demo.earthquakes (json); the same feed in Avro in topic
// `earthquakes_avro`, its schema in the registry, and table
// demo.earthquakes_avro.
func Dev(ctx context.Context, cfg DevConfig) error {
	cfg = cfg.WithDefaults()
	if cfg.DataFile == "" {
		p, ok := FindData(USGSFile)
		if !ok {
			return fmt.Errorf("%w: %s (looked in $MINK_DATA_DIR and ../shared/data above the working directory); pass --data FILE", ErrNoData, USGSFile)
		}
		cfg.DataFile = p
	}
	events, err := LoadUSGS(cfg.DataFile)
	if err != nil {
		return err
	}
	env, err := StartEnv(ctx, cfg)
	if err != nil {
		return err
	}
	defer env.Stop()
	avroNote, err := Demo(ctx, env, events)
	if err != nil {
		return err
	}
	access, files, err := devAccess(ctx, env, cfg.Command)
	defer func() {
		for _, f := range files {
			_ = os.Remove(f)
		}
	}()
	if err != nil {
		return err
	}
	first := env.Nodes[0].URL()
	var urls []string
	for _, n := range env.Nodes {
		urls = append(urls, n.URL())
	}
	fmt.Fprintf(cfg.Out, `
Mink dev is running: %d node(s), Kafka at %s, PostgreSQL at %s
Produced %d USGS events from %s into topic "earthquakes" (3 partitions),
and in Avro into topic "%s" (schema subject "%s").%s

  Iceberg REST catalog:  %s   (warehouse "mink"; S3 endpoint: the same URL, path style)
  Schema Registry:       %s
  Nodes:                 %s
  Scan the table:        %[12]s scan demo.earthquakes --limit 10 --columns properties.time,properties.mag,properties.place
  The Avro table:        %[12]s scan demo.earthquakes_avro --limit 10 --columns properties.time,properties.mag,properties.place
  Cluster status:        %[12]s status
  Web console:           %[14]s
  Dead letters:          %[12]s scan 'demo.earthquakes~dlq'
%[13]s
Ctrl-C stops everything and deletes the temporary data.
`, len(env.Nodes), strings.Join(env.Brokers, ","), pgDesc(env), len(events), cfg.DataFile, AvroTopic, AvroSubject, avroNote,
		first, env.RegistryURL, strings.Join(urls, " "), cfg.Command, access, consoleLine(env, first))
	<-ctx.Done()
	return nil
}

// consoleLine is the banner's line on the console: its URL on the first
// node and, under principals, the credential to sign in with.
func consoleLine(env *Env, nodeURL string) string {
	if env.Credential == "" {
		return nodeURL + "/ui   (any node shows the whole cluster)"
	}
	id, secret, _ := strings.Cut(env.Credential, ":")
	return fmt.Sprintf("%s/ui   (any node; sign in as dev-admin: user %s, password %s)", nodeURL, id, secret)
}

// devAccess, under DevConfig.Principals, creates principal demo-reader
// (grant demo.*), writes the admin credential where the CLI finds it
// (CredentialFile) and returns the banner's lines on access and the files
// written (to remove at the end); under auth none, a line saying so.
func devAccess(ctx context.Context, env *Env, command string) (banner string, files []string, err error) {
	if env.Credential == "" {
		return "\n  Access control:        none (--auth none): anyone reaching the nodes reads every table\n", nil, nil
	}
	reader, err := env.CreatePrincipal(ctx, "demo-reader", false, "demo.*")
	if err != nil {
		return "", nil, err
	}
	if files, err = writeCredentials(env, env.Credential); err != nil {
		return "", files, err
	}
	first := env.Nodes[0].URL()
	return fmt.Sprintf(`
  Admin credential:      %[1]s
                         (principal dev-admin; %[4]s reads it from %[5]s while mink dev runs)
  Reader credential:     %[2]s   (principal demo-reader, grant demo.*)
  PyIceberg:             load_catalog("mink", uri="%[3]s", credential="%[2]s")
  iceberg-go:            rest.NewCatalog(ctx, "mink", "%[3]s", rest.WithCredential("%[2]s"))
  More principals:       %[4]s principal create NAME --grant 'NS.*' --postgres %[6]s
`, env.Credential, reader, first, command, filepath.Dir(files[0]), pgArg(env)), files, nil
}

// Demo fills env with the demo: topics `earthquakes` and AvroTopic (3
// partitions each, created when Kafka is in-process) with events in JSON
// and in Avro, and tables demo.earthquakes (json) and
// demo.earthquakes_avro (avro). It returns a note for the banner when the
// nodes cannot read Avro tables yet (then demo.earthquakes_avro is not
// created).
func Demo(ctx context.Context, env *Env, events []Event) (note string, err error) {
	if env.Kafka != nil {
		for _, topic := range []string{"earthquakes", AvroTopic} {
			if err := env.Kafka.CreateTopic(topic, 3, nil); err != nil {
				return "", fmt.Errorf("devenv: create topic %s: %w", topic, err)
			}
		}
	}
	first := env.Nodes[0].URL()
	if err := env.CreateTable(ctx, first, map[string]any{
		"namespace": "demo", "name": "earthquakes", "topic": "earthquakes",
		"value_format": "json", "key_format": "string", "schema": json.RawMessage(EarthquakesSchema),
	}); err != nil {
		return "", err
	}
	if err := Produce(ctx, env.Brokers, "earthquakes", events, env.KafkaOpts...); err != nil {
		return "", fmt.Errorf("devenv: produce: %w", err)
	}
	return avroDemo(ctx, env, first, events)
}

// avroDemo registers EarthquakesAvro, produces the feed in Avro into
// AvroTopic (same keys, timestamps and partitions as the JSON topic) and
// creates demo.earthquakes_avro. Its note is empty (the banner has room
// for one).
func avroDemo(ctx context.Context, env *Env, nodeURL string, events []Event) (string, error) {
	id, err := RegisterEarthquakesAvro(ctx, env.RegistryURL)
	if err != nil {
		return "", err
	}
	avroEvents, err := AvroEvents(events, id)
	if err != nil {
		return "", err
	}
	if err := Produce(ctx, env.Brokers, AvroTopic, avroEvents, env.KafkaOpts...); err != nil {
		return "", fmt.Errorf("devenv: produce %s: %w", AvroTopic, err)
	}
	// The subject is left to its default, <topic>-value (AvroSubject).
	return "", env.CreateTable(ctx, nodeURL, map[string]any{
		"namespace": "demo", "name": "earthquakes_avro", "topic": AvroTopic,
		"value_format": "avro", "key_format": "string",
	})
}

// CreateTable posts a table definition to a node's admin API, with no
// credential (auth none). An answer other than 2xx is an error quoting its
// status and body.
func CreateTable(ctx context.Context, nodeURL string, def map[string]any) error {
	return createTable(ctx, &admin.Client{URL: nodeURL}, def)
}

// CreateTable is the package's CreateTable with the environment's admin
// credential (Credential).
func (e *Env) CreateTable(ctx context.Context, nodeURL string, def map[string]any) error {
	return createTable(ctx, &admin.Client{URL: nodeURL, Credential: e.Credential}, def)
}

func createTable(ctx context.Context, c *admin.Client, def map[string]any) error {
	_, err := c.CreateTable(ctx, def)
	if se := (*admin.StatusError)(nil); errors.As(err, &se) {
		return fmt.Errorf("devenv: create table: %s: %s", se.Status, bytes.TrimSpace(se.Body))
	}
	if err != nil {
		return fmt.Errorf("devenv: create table: %w", err)
	}
	return nil
}

// pgArg is the --postgres argument of a command the banner prints: the
// throwaway cluster's URL in single quotes (its '?' is a glob to zsh), or
// URL for an external one (its URL may hold a password: not printed).
func pgArg(env *Env) string {
	if env.Postgres != nil {
		return "'" + env.Postgres.URL + "'"
	}
	return "URL"
}

func pgDesc(env *Env) string {
	if env.Postgres != nil {
		return env.Postgres.URL
	}
	return "(external)"
}
