package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/pgstore"
)

// principalUsage is `mink help principal`.
const principalUsage = `Usage of mink principal:
  mink principal create NAME [--grant 'NS.*' | --grant NS.TABLE | --grant '*' …] [--admin]
      Create a principal and print its credential CLIENT_ID:SECRET, once: Mink keeps
      only a hash of the secret. Engines use it as the REST catalog's credential
      (OAuth2 client credentials). A grant NS.* covers every table of NS and of the
      namespaces below it; NS.TABLE that table only (its dead letters are
      NS.TABLE~dlq); * every table. --admin: the admin API and every table.
  mink principal list
  mink principal revoke NAME
      Its tokens and vended credentials are refused within a second; the name is
      not reused.
These commands change the PostgreSQL database of the cluster directly: they take
--postgres URL (MINK_POSTGRES_URL), whoever can write the database can create principals.
`

// cmdLineOnly marks a flag that takes no MINK_* variable or YAML key:
// principal create's --admin and --grant would otherwise read MINK_ADMIN
// (the admin API's URL) or a stray MINK_GRANT.
type cmdLineOnly interface{ commandLineOnly() }

// boolArg is a bool flag of the command line only.
type boolArg bool

func (b *boolArg) String() string   { return strconv.FormatBool(bool(*b)) }
func (b *boolArg) IsBoolFlag() bool { return true }
func (b *boolArg) commandLineOnly() {}
func (b *boolArg) Set(s string) error {
	v, err := strconv.ParseBool(s)
	*b = boolArg(v)
	return err
}

// repeatedArg is a flag given once per value, of the command line only.
type repeatedArg []string

func (r *repeatedArg) String() string   { return strings.Join(*r, " ") }
func (r *repeatedArg) commandLineOnly() {}
func (r *repeatedArg) Set(s string) error {
	*r = append(*r, s)
	return nil
}

// principalCmd runs `mink principal create|list|revoke`.
func principalCmd(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return usagef("missing principal command (create, list or revoke)")
	}
	sub, args := args[0], args[1:]
	if sub == "-h" || sub == "--help" || sub == "help" {
		_, err := io.WriteString(stdout, principalUsage)
		return err
	}
	fs := flag.NewFlagSet("principal "+sub, flag.ContinueOnError)
	pg := fs.String("postgres", "", "PostgreSQL URL of the cluster (required)")
	var name string
	var grants repeatedArg
	var isAdmin boolArg
	switch sub {
	case "create":
		fs.Var(&grants, "grant", "a table the principal may read: NS.*, NS.TABLE or *; repeat for more")
		fs.Var(&isAdmin, "admin", "an admin: the admin API, every table")
		if err := parse(fs, args, &name); err != nil {
			return err
		}
	case "revoke":
		if err := parse(fs, args, &name); err != nil {
			return err
		}
	case "list":
		if err := parse(fs, args); err != nil {
			return err
		}
	default:
		return usagef("unknown principal command %q (create, list or revoke)", sub)
	}
	if sub != "list" && name == "" {
		return usagef("missing principal name")
	}
	if *pg == "" {
		return usagef("--postgres is required (or MINK_POSTGRES_URL)")
	}
	if sub == "create" {
		if err := auth.CheckName(name); err != nil {
			return usageError{err}
		}
		for _, g := range grants {
			if err := auth.CheckGrant(g); err != nil {
				return usageError{err}
			}
		}
		if len(grants) == 0 && !isAdmin {
			return usagef("a principal needs a --grant (NS.*, NS.TABLE or *) or --admin")
		}
	}
	pool, err := pgstore.Open(ctx, pgstore.Config{URL: *pg, MaxConns: 2})
	if err != nil {
		return err
	}
	defer pool.Close()
	store := auth.NewStore(pool)
	switch sub {
	case "create":
		id, secret, err := store.Create(ctx, name, grants, bool(isAdmin))
		if errors.Is(err, auth.ErrExists) {
			return fmt.Errorf("principal %s exists or existed (revoked names are not reused)", name)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "created principal %s; its credential (shown once, keep it secret):\n%s:%s\n", name, id, secret)
		return nil
	case "revoke":
		at, err := store.Revoke(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked principal %s at %s\n", name, at.UTC().Format(time.RFC3339))
		return nil
	}
	list, err := store.List(ctx)
	if err != nil {
		return err
	}
	rows := make([][]string, len(list))
	for i, p := range list {
		revoked := "-"
		if p.Revoked != nil {
			revoked = p.Revoked.UTC().Format(time.RFC3339)
		}
		grants := strings.Join(p.Grants, ",")
		if grants == "" {
			grants = "-"
		}
		rows[i] = []string{p.Name, p.ClientID, strconv.FormatBool(p.Admin), grants,
			p.Created.UTC().Format(time.RFC3339), revoked}
	}
	return printTable(stdout, "", []string{"NAME", "CLIENT ID", "ADMIN", "GRANTS", "CREATED", "REVOKED"}, rows)
}
