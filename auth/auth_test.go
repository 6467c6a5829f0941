package auth_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
)

// Concurrent first callers all get the one stored secret.
func TestClusterSecret(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	secrets := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range secrets {
		wg.Go(func() {
			s, err := auth.ClusterSecret(ctx, pool)
			if err != nil {
				t.Error(err)
			}
			secrets[i] = s
		})
	}
	wg.Wait()
	for i, s := range secrets {
		if len(s) != 32 || !bytes.Equal(s, secrets[0]) {
			t.Fatalf("caller %d got %x, caller 0 %x", i, s, secrets[0])
		}
	}
	again, err := auth.ClusterSecret(ctx, pool)
	if err != nil || !bytes.Equal(again, secrets[0]) {
		t.Fatalf("later call: %x, %v; want %x", again, err, secrets[0])
	}
	if a, b := auth.DeriveKey(again, auth.PurposeForward), auth.DeriveKey(again, auth.PurposeCredentials); bytes.Equal(a, b) || len(a) != 32 {
		t.Fatalf("keys of two purposes: %x, %x", a, b)
	}
}

func TestAllows(t *testing.T) {
	p := &auth.Principal{Name: "p", Grants: []string{"a.*", "b.t1"}}
	for _, c := range []struct {
		ns, name string
		want     bool
	}{
		{"a", "t1", true}, {"a", "t1~dlq", true}, {"a.x", "t", true},
		{"b", "t1", true}, {"b", "t1~dlq", false}, {"b", "t2", false},
		{"ab", "t", false}, {"c", "t1", false},
	} {
		if got := p.Allows(c.ns, c.name); got != c.want {
			t.Errorf("Allows(%q, %q) = %v, want %v", c.ns, c.name, got, c.want)
		}
	}
	if !(&auth.Principal{Admin: true}).Allows("z", "z") {
		t.Error("an admin is not allowed everything")
	}
}
