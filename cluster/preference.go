package cluster

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
)

// Preference is node's preference for scope (a lease scope or a file path):
// the first 8 bytes, big-endian, of SHA-256(node ‖ 0x00 ‖ scope). Every node
// computes the same numbers (docs/design.md §3.3, §3.5).
func Preference(node, scope string) uint64 {
	h := sha256.New()
	h.Write([]byte(node))
	h.Write([]byte{0})
	h.Write([]byte(scope))
	var sum [sha256.Size]byte
	return binary.BigEndian.Uint64(h.Sum(sum[:0])[:8])
}

// prefers reports whether node a ranks above node b for scope: higher
// preference first, ties broken by the smaller node id.
func prefers(a, b, scope string) bool {
	pa, pb := Preference(a, scope), Preference(b, scope)
	if pa != pb {
		return pa > pb
	}
	return a < b
}

// Owner returns the member that owns path: the live node with the server
// role that prefers path most (rendezvous hashing, docs/design.md §3.5). ok is false
// when no member has the server role.
func Owner(members []Member, path string) (owner Member, ok bool) {
	for _, m := range members {
		if !slices.Contains(m.Roles, RoleServer) {
			continue
		}
		if !ok || prefers(m.ID, owner.ID, path) {
			owner, ok = m, true
		}
	}
	return owner, ok
}
