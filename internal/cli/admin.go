package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/minkhq/mink/admin"
	"github.com/minkhq/mink/devenv"
	"github.com/minkhq/mink/tables"
)

// target is the node an admin command calls, and with what credential.
type target struct {
	url        string
	credential string
}

// adminFlag registers --admin and --credential (MINK_ADMIN,
// MINK_CREDENTIAL) in fs; whose says whose credential the command needs.
// parse refuses a --credential that is not CLIENT_ID:SECRET.
func adminFlag(fs *flag.FlagSet, whose string) *target {
	t := &target{}
	fs.StringVar(&t.url, "admin", "http://127.0.0.1:8181", "admin URL of any Mink node")
	fs.StringVar(&t.credential, "credential", "",
		whose+" CLIENT_ID:SECRET; prefer MINK_CREDENTIAL, as flags show in ps. "+
			"Default: the one mink dev wrote for a node on this machine, if any")
	return t
}

// Whose credential a command needs (adminFlag).
const (
	adminCredential = "an admin principal's (mink principal create NAME --admin)"
	anyCredential   = "a principal's, granted the table (mink principal create NAME --grant NS.NAME)"
)

// cred returns the credential: --credential / MINK_CREDENTIAL, else the
// one `mink dev` wrote for the node at the --admin URL (devenv.DevCredential),
// else none (a node under auth none).
func (t *target) cred() string {
	if t.credential != "" {
		return t.credential
	}
	c, _ := devenv.DevCredential(t.url)
	return c
}

// client returns the admin API client of t.
func (t *target) client() *admin.Client {
	return &admin.Client{URL: t.url, Credential: t.cred()}
}

// reachable adds to an error of the admin client what to check when the
// node could not be reached (the http.Client's errors are *url.Error).
func reachable(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("cannot reach the admin API (is a node running? --admin): %w", err)
	}
	return err
}

// namedTable names table name in err when the node answered 404 (the
// admin API's message, "table not found", does not say which one).
func namedTable(name string, err error) error {
	var se *admin.StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return fmt.Errorf("table %s: %w", name, err)
	}
	return err
}

// tableUsage is `mink help table`.
const tableUsage = `Usage of mink table:
  mink table create NS.NAME --topic T --value-format raw|string|json|avro|protobuf|json-schema
              [--key-format raw|string|avro|protobuf|json-schema] [--schema FILE | --infer]
              [--subject S] [--key-subject S] [--subject-version N] [--key-subject-version N]
              [--message M] [--key-message M] [--start earliest|latest] [--property k=v,…] [--dry-run]
      Registry formats: the columns come from one version of the subject, then every
      other version evolves them by Iceberg's rules or its records are dead letters.
      By default the version whose evolution lands the most retained records (ties:
      the newer); --subject-version N takes version N. Create prints this plan (each
      version's table schema version or dead-letter reason, and its retained records,
      counted or estimated); --dry-run prints it and creates nothing. Protobuf: the
      table holds one message (--message, default the latest version's first).
  mink table list | mink table get NS.NAME | mink table delete NS.NAME
  mink table status NS.NAME
      Progress per partition, files, last commit, history (main's snapshots and the oldest:
      how far back mink scan --as-of reaches) and the tags group.<name> (snapshot, time,
      records: mink scan --ref), schema versions, unknown JSON fields, dead letters.
  mink table alter NS.NAME --schema FILE
      Evolve a json table's columns to take the Iceberg schema in FILE, by Iceberg's
      rules: new fields (at any depth, always optional), int→long, float→double, wider
      decimal precision, required→optional. A column FILE lacks is kept. Any other
      change is refused with the reason. Files built from then on use the new version.
  mink table properties NS.NAME [--set KEY=VALUE …] [--remove KEY …]
      Change properties after create: mink.group-tags (consumer groups whose committed
      offsets become tags group.<name>, e.g. --set mink.group-tags=billing,etl-*),
      history.expire.*, mink.history.*, commit.manifest.*, commit.manifest-merge.*,
      write.target-file-size-bytes. The Iceberg metadata changes at once.
  mink table repair NS.NAME [--batch 20]
      Rebuild, with the table's newest schema version, the ranges whose dead letters
      it now decodes, and move those records from NS.NAME~dlq into NS.NAME: each batch
      is one commit of both tables, so every record is in exactly one of them. It also
      rebuilds the ranges encoded before a newer version gave a column an Avro default
      (they read null there; mink table status counts them as "defaults: N ranges").
      Safe to repeat. Records Kafka no longer holds cannot be repaired; it says how many.
Every command takes --admin URL (default http://127.0.0.1:8181, MINK_ADMIN) and --credential
CLIENT_ID:SECRET of an admin principal (MINK_CREDENTIAL); -h lists its flags.
`

// tableCmd runs `mink table create|list|get|status|delete|alter|repair`.
func tableCmd(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("missing table command (create, list, get, status, delete, alter, repair or properties)")
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "--help" || sub == "help" {
		_, err := io.WriteString(stdout, tableUsage)
		return err
	}
	fs := flag.NewFlagSet("table "+sub, flag.ContinueOnError)
	adminURL := adminFlag(fs, adminCredential)
	switch sub {
	case "create":
		dry := fs.Bool("dry-run", false, "print the plan (the subject version the columns come from, what becomes of each version's records) and create nothing")
		def, err := parseTableCreate(fs, args)
		if err != nil {
			return err
		}
		c := adminURL.client()
		if *dry {
			p, err := c.PlanTable(ctx, def)
			if err != nil {
				return reachable(err)
			}
			printPlan(stdout, p.Plan)
			fmt.Fprintf(stdout, "dry run: %s.%s not created\n", def.Namespace, def.Name)
			return nil
		}
		t, err := c.CreateTablePlan(ctx, def)
		if err != nil {
			return reachable(err)
		}
		printPlan(stdout, t.Plan)
		fmt.Fprintf(stdout, "created %s.%s on topic %s (dead letters: %s.%s~dlq)\n", def.Namespace, def.Name, def.Topic, def.Namespace, def.Name)
		return nil
	case "list":
		if err := parse(fs, args); err != nil {
			return err
		}
		c := adminURL.client()
		ts, err := c.Tables(ctx)
		if err != nil {
			return reachable(err)
		}
		return printTable(stdout, "", []string{"TABLE", "TOPIC", "FORMAT", "SNAPSHOT"}, tableRows(ts))
	case "alter":
		return alterCmd(ctx, fs, adminURL, args, stdout)
	case "repair":
		return repairCmd(ctx, fs, adminURL, args, stdout)
	case "properties":
		return propertiesCmd(ctx, fs, adminURL, args, stdout)
	case "get", "delete", "status":
		var name string
		if err := parse(fs, args, &name); err != nil {
			return err
		}
		if name == "" {
			return usagef("missing table name NS.NAME")
		}
		return reachable(namedTable(name, tableCall(ctx, adminURL.client(), sub, name, stdout)))
	}
	return usagef("unknown table command %q (create, list, get, status, delete, alter, repair or properties)", sub)
}

// tableCall runs `mink table get|delete|status NAME`.
func tableCall(ctx context.Context, c *admin.Client, sub, name string, stdout io.Writer) error {
	switch sub {
	case "delete":
		if err := c.DeleteTable(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "deleted %s (the topic is untouched)\n", name)
		return nil
	case "status":
		st, err := c.TableStatus(ctx, name)
		if err != nil {
			return err
		}
		return printTableStatus(stdout, st, time.Now())
	}
	t, err := c.TableJSON(ctx, name)
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(t, '\n'))
	return err
}

// parseTableCreate reads the command line of `mink table create` into the
// definition to post.
func parseTableCreate(fs *flag.FlagSet, args []string) (*tables.Definition, error) {
	topic := fs.String("topic", "", "Kafka topic (required)")
	vf := fs.String("value-format", "", "raw, string, json, avro, protobuf or json-schema (required)")
	kf := fs.String("key-format", "raw", "raw, string, avro, protobuf or json-schema (these three also fill a key column)")
	schema := fs.String("schema", "", "Iceberg schema JSON file (json, unless --infer)")
	infer := fs.Bool("infer", false, "json: infer the schema from the records Kafka retains; it evolves as new fields appear")
	subject := fs.String("subject", "", "registry subject of the value schema (default TOPIC-value)")
	keySubject := fs.String("key-subject", "", "registry subject of the key schema (default TOPIC-key)")
	subjectVersion := fs.Int("subject-version", 0, "the value subject's version whose schema gives the columns (default: the version whose evolution lands the most retained records)")
	keySubjectVersion := fs.Int("key-subject-version", 0, "the key subject's version whose schema gives the key column (default: as --subject-version)")
	message := fs.String("message", "", "protobuf: the one message the table holds, fully qualified (default the subject's first)")
	keyMessage := fs.String("key-message", "", "protobuf key: the one message the key column holds (default the key subject's first)")
	start := fs.String("start", "earliest", "earliest or latest")
	props := &propertyFlag{name: "property"}
	fs.Var(props, "property", "table property k=v[,k=v…] (repeatable; a value may hold commas: mink.group-tags=billing,etl-*)")
	var name string
	if err := parse(fs, args, &name); err != nil {
		return nil, err
	}
	switch {
	case name == "":
		return nil, usagef("missing table name NS.NAME")
	case *topic == "":
		return nil, usagef("--topic is required")
	case *vf == "":
		return nil, usagef("--value-format is required (raw, string, json, avro, protobuf or json-schema)")
	}
	for _, f := range []string{"subject-version", "key-subject-version"} {
		if v := fs.Lookup(f).Value.String(); flagSet(fs, f) && v == "0" {
			return nil, usagef("--%s 0: a subject version is a number from 1 (leave the flag out to let the plan choose)", f)
		}
	}
	ns, tname, err := splitTableName(name)
	if err != nil {
		return nil, err
	}
	def := &tables.Definition{Namespace: ns, Name: tname, Topic: *topic, ValueFormat: *vf, KeyFormat: *kf, Start: *start,
		Infer: *infer, Subject: *subject, KeySubject: *keySubject, SubjectVersion: *subjectVersion, KeySubjectVersion: *keySubjectVersion,
		Message: *message, KeyMessage: *keyMessage}
	if *schema != "" {
		b, err := os.ReadFile(*schema)
		if err != nil {
			return nil, err
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("schema file %s is not valid JSON (expected an Iceberg schema: {\"type\":\"struct\",\"fields\":[…]})", *schema)
		}
		def.Schema = b
	}
	if len(props.m) > 0 {
		def.Properties = props.m
	}
	return def, nil
}

// tableRows are the lines of `mink table list`.
func tableRows(ts []*tables.Table) [][]string {
	rows := make([][]string, len(ts))
	for i, t := range ts {
		snap := "-"
		if t.CurrentSnapshotID != nil {
			snap = fmt.Sprint(*t.CurrentSnapshotID)
		}
		rows[i] = []string{t.FullName(), t.Topic, string(t.ValueFormat), snap}
	}
	return rows
}

// printTable prints a header and rows of cells in aligned columns, each
// line after indent.
func printTable(w io.Writer, indent string, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range append([][]string{header}, rows...) {
		fmt.Fprintln(tw, indent+strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// flagSet reports whether name was given on fs's command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
