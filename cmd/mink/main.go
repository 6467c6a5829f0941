// Command mink serves Kafka topics as Apache Iceberg tables. See
// internal/cli for the commands.
package main

import (
	"os"

	"github.com/minkhq/mink/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) }
