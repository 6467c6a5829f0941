package auth_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/internal/pgtest"
)

// Create, list, authenticate, revoke: what the store keeps and refuses.
func TestStore(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	s := auth.NewStore(pool)

	id, secret, err := s.Create(ctx, "reader", []string{"b.t1", "a.*"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(id) != 16 || len(secret) != 43 {
		t.Fatalf("client id %q (want 16 chars), secret %q (want 43)", id, secret)
	}
	if _, _, err := s.Create(ctx, "ops", nil, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Create(ctx, "reader", nil, false); !errors.Is(err, auth.ErrExists) {
		t.Fatalf("second create of reader: %v, want ErrExists", err)
	}
	for _, bad := range []struct{ name, grant string }{{"-x", "a.*"}, {"x.y", "a.*"}, {"x", "a"}, {"x", "a..t"}, {"x", "a.t/u"}, {"x", "*.t"}} {
		if _, _, err := s.Create(ctx, bad.name, []string{bad.grant}, false); err == nil {
			t.Errorf("Create(%q, %q) accepted", bad.name, bad.grant)
		}
	}

	p, err := s.Authenticate(ctx, id, secret)
	if err != nil || p.Name != "reader" || p.Admin || !slices.Equal(p.Grants, []string{"a.*", "b.t1"}) {
		t.Fatalf("Authenticate: %+v, %v", p, err)
	}
	for _, c := range [][2]string{{id, secret + "x"}, {id, ""}, {"nope", secret}} {
		if _, err := s.Authenticate(ctx, c[0], c[1]); !errors.Is(err, auth.ErrInvalidClient) {
			t.Errorf("Authenticate(%q, %q): %v, want ErrInvalidClient", c[0], c[1], err)
		}
	}

	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != "ops" || !list[0].Admin || len(list[0].Grants) != 0 ||
		list[1].Name != "reader" || list[1].ClientID != id || !slices.Equal(list[1].Grants, []string{"a.*", "b.t1"}) ||
		list[1].Revoked != nil || time.Since(list[1].Created) > time.Minute {
		t.Fatalf("List: %+v", list)
	}

	if ok, err := s.Active(ctx, "reader"); !ok || err != nil {
		t.Fatalf("Active(reader) before revoke: %v, %v", ok, err)
	}
	at, err := s.Revoke(ctx, "reader")
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.Revoke(ctx, "reader"); err != nil || !again.Equal(at) {
		t.Fatalf("second revoke: %v, %v; want the first time %v", again, err, at)
	}
	if _, err := s.Revoke(ctx, "ghost"); !errors.Is(err, auth.ErrNoPrincipal) {
		t.Fatalf("Revoke(ghost): %v", err)
	}
	if ok, err := s.Active(ctx, "reader"); ok || err != nil {
		t.Fatalf("Active(reader) after revoke: %v, %v", ok, err)
	}
	if _, err := s.Authenticate(ctx, id, secret); !errors.Is(err, auth.ErrInvalidClient) {
		t.Fatalf("Authenticate after revoke: %v", err)
	}
	if _, _, err := s.Create(ctx, "reader", nil, false); !errors.Is(err, auth.ErrExists) {
		t.Fatalf("re-create of a revoked name: %v, want ErrExists", err)
	}
	list, _ = s.List(ctx)
	if list[1].Revoked == nil || !list[1].Revoked.Equal(at) {
		t.Fatalf("List after revoke: %+v", list[1])
	}
}

// A revocation on another node (another Store) is seen within CacheTTL.
func TestStoreCache(t *testing.T) {
	pool, _ := pgtest.Pool(t)
	ctx := context.Background()
	a, b := auth.NewStore(pool), auth.NewStore(pool)
	if _, _, err := a.Create(ctx, "p", []string{"*"}, false); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Active(ctx, "p"); !ok {
		t.Fatal("p not active")
	}
	if _, err := a.Revoke(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(auth.CacheTTL + 2*time.Second)
	for {
		ok, err := b.Active(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("revocation not seen by the other store")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestCheckGrant(t *testing.T) {
	for _, g := range []string{"*", "a.*", "a.b.*", "a.t", "a.b.t~dlq", "a_1.t-2"} {
		if err := auth.CheckGrant(g); err != nil {
			t.Errorf("CheckGrant(%q): %v", g, err)
		}
	}
	for _, g := range []string{"", "a", "a.", ".t", "a.*.t", "a.t~x", "a.-t", "a b.t", "a.**"} {
		if err := auth.CheckGrant(g); err == nil {
			t.Errorf("CheckGrant(%q) accepted", g)
		}
	}
}
