// Package settings holds what the Config types of Mink's packages share:
// the error of a setting that cannot work, named by its key, so that a
// Go caller reads "cluster: lease_ttl must be positive, not -1s" and
// `mink serve` can point at the flag that set it (--lease-ttl).
//
// The rule every Config follows (River's client config is the model): a
// zero field takes the package's documented Default* (Defaults), and a
// negative number is an error, never silently the default (Negative).
// A field's `setting` tag is its key.
package settings

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
)

// Error is a setting a Config's Validate rejected.
type Error struct {
	// Key is the setting's name in snake case, as `mink serve` reads it
	// from its YAML file (lease_ttl; the flag is --lease-ttl, the variable
	// MINK_LEASE_TTL).
	Key string
	// Problem says what is wrong, with the value: "must be positive, not -1s".
	Problem string
}

func (e *Error) Error() string { return e.Key + " " + e.Problem }

// Errorf returns an *Error for key.
func Errorf(key, format string, a ...any) error {
	return &Error{Key: key, Problem: fmt.Sprintf(format, a...)}
}

// Missing is the Problem of a required setting left empty.
const Missing = "is required"

// Required returns an *Error when v is empty.
func Required(key, v string) error {
	if v == "" {
		return &Error{Key: key, Problem: Missing}
	}
	return nil
}

// Defaults returns cfg with each zero field (reflect.Value.IsZero: 0, "",
// nil) set to the same field of def: a Config's WithDefaults in one call,
// its defaults in one struct literal.
func Defaults[T any](cfg, def T) T {
	c, d := reflect.ValueOf(&cfg).Elem(), reflect.ValueOf(def)
	for i := range c.NumField() {
		if f := c.Field(i); f.CanSet() && f.IsZero() {
			f.Set(d.Field(i))
		}
	}
	return cfg
}

// Negative returns an *Error for the first integer or duration field of
// the struct cfg that is negative and tagged `setting:"<key>"`. Zero is
// no error: it takes the default.
func Negative(cfg any) error {
	v := reflect.ValueOf(cfg)
	for i := range v.NumField() {
		key, f := v.Type().Field(i).Tag.Get("setting"), v.Field(i)
		if key != "" && f.CanInt() && f.Int() < 0 {
			return Errorf(key, "must be positive, not %v", f.Interface())
		}
	}
	return nil
}

// Check returns the first error of errs, wrapped as "<pkg>: <error>", or
// nil: a Config's Validate lists its checks in one call.
func Check(pkg string, errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", pkg, err)
		}
	}
	return nil
}

// CheckHostPort returns an error unless addr is HOST:PORT (the host may be
// empty or an IPv6 literal in brackets) with a decimal port from 1 to
// 65535, or 0 too when zero is true (a listener's "any free port").
func CheckHostPort(addr string, zero bool) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errors.New("want HOST:PORT")
	}
	n, err := strconv.Atoi(port)
	if err != nil || n > 65535 || n < 0 || (n == 0 && !zero) {
		return fmt.Errorf("port %q is not a TCP port", port)
	}
	return nil
}
