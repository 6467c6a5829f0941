package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/minkhq/mink/tables"
)

// propertyFlag collects KEY=VALUE pairs from a repeatable flag, several to
// a use separated by commas (--property a=1,b=2). A comma-separated piece
// without '=' continues the value before it, so a value may hold commas:
// --property mink.group-tags=billing,etl-* is one property.
type propertyFlag struct {
	name string
	m    map[string]string
	last string
}

func (p *propertyFlag) String() string {
	if p == nil || len(p.m) == 0 {
		return ""
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(p.m)) {
		out = append(out, k+"="+p.m[k])
	}
	return strings.Join(out, ",")
}

func (p *propertyFlag) Set(s string) error {
	if p.m == nil {
		p.m = map[string]string{}
	}
	p.last = ""
	for _, piece := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(piece, "=")
		switch {
		case ok && strings.TrimSpace(k) != "":
			p.last = strings.TrimSpace(k)
			p.m[p.last] = v
		case !ok && p.last != "":
			p.m[p.last] += "," + piece
		default:
			return usagef("--%s %q: want KEY=VALUE", p.name, s)
		}
	}
	return nil
}

// propertiesCmd runs `mink table properties NS.NAME [--set k=v …] [--remove k …]`.
func propertiesCmd(ctx context.Context, fs *flag.FlagSet, adminURL *target, args []string, stdout io.Writer) error {
	change, name, err := parseProperties(fs, args)
	if err != nil {
		return err
	}
	t, err := adminURL.client().SetProperties(ctx, name, change)
	if err != nil {
		return reachable(namedTable(name, err))
	}
	if len(t.Properties) == 0 {
		// Say so: a bare "…:" line reads as if the output were cut.
		fmt.Fprintf(stdout, "changed the properties of %s: it has none now\n", name)
		return nil
	}
	fmt.Fprintf(stdout, "changed the properties of %s, now:\n", name)
	for _, k := range slices.Sorted(maps.Keys(t.Properties)) {
		fmt.Fprintf(stdout, "  %s=%s\n", k, t.Properties[k])
	}
	return nil
}

// parseProperties reads the command line of `mink table properties`.
func parseProperties(fs *flag.FlagSet, args []string) (tables.PropertyChange, string, error) {
	set := &propertyFlag{name: "set"}
	fs.Var(set, "set", "property to set, KEY=VALUE (repeatable; a value may hold commas)")
	var remove listFlag
	fs.Func("remove", "property to remove, KEY[,KEY…] (repeatable)", func(s string) error {
		var l listFlag
		_ = l.Set(s)
		remove = append(remove, l...)
		return nil
	})
	var name string
	if err := parse(fs, args, &name); err != nil {
		return tables.PropertyChange{}, "", err
	}
	if name == "" {
		return tables.PropertyChange{}, "", usagef("missing table name NS.NAME")
	}
	if _, _, err := splitTableName(name); err != nil {
		return tables.PropertyChange{}, "", err
	}
	if len(set.m) == 0 && len(remove) == 0 {
		return tables.PropertyChange{}, "", usagef("nothing to change: give --set KEY=VALUE or --remove KEY")
	}
	return tables.PropertyChange{Set: set.m, Remove: remove}, name, nil
}
