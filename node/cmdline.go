package node

import (
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// secretFlags are the flags whose whole value is a secret: passwords,
// tokens, client secrets, principals' credentials.
var secretFlags = map[string]bool{
	"schema-registry-password":       true,
	"schema-registry-token":          true,
	"kafka-sasl-password":            true,
	"kafka-sasl-oauth-client-secret": true,
	"credential":                     true,
	"metrics-token":                  true,
}

// urlFlags are the flags whose value is a URL that may carry a password
// (user:password@host, or libpq's password= key).
var urlFlags = map[string]bool{"postgres": true, "schema-registry": true}

const redacted = "xxxxx"

var dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)`)

// redactArgs returns args with the secrets of a node's command line
// replaced: every secretFlags value whole, and the password of every
// urlFlags value (URL userinfo, a password= query or keyword parameter).
// Flags are read as package flag does: -name or --name, with =value or
// the next argument.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			name, ok = strings.CutPrefix(a, "-")
		}
		if !ok || name == "" {
			continue
		}
		name, val, inline := strings.Cut(name, "=")
		if !secretFlags[name] && !urlFlags[name] {
			continue
		}
		at := i
		if !inline {
			if i+1 >= len(out) {
				continue
			}
			at, val = i+1, out[i+1]
			i++
		}
		if secretFlags[name] {
			val = redacted
		} else {
			val = redactURL(val)
		}
		if inline {
			out[at] = a[:strings.IndexByte(a, '=')+1] + val
		} else {
			out[at] = val
		}
	}
	return out
}

// redactURL hides the password of a URL's userinfo and of libpq's
// password= (in a URL's query or a keyword/value connection string).
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
			s = u.String()
		}
	}
	return dsnPassword.ReplaceAllString(s, "${1}"+redacted)
}

// cmdline answers /debug/pprof/cmdline as net/http/pprof's Cmdline does
// (the arguments separated by NUL), with the secrets redacted (redactArgs):
// the command line holds --postgres's URL and may hold other secrets.
func cmdline(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(strings.Join(redactArgs(os.Args), "\x00")))
}
