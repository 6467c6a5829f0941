package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/minkhq/mink/commit"
	"github.com/minkhq/mink/icebergmeta"
	"github.com/minkhq/mink/tables"
)

// setProperties answers POST /admin/v1/tables/{ns.name}/properties with a
// tables.PropertyChange ({"set":{"k":"v"},"remove":["k"]}): 200 and the
// table; 400 for a property that cannot change after create
// (tables.Changeable), a malformed value or a dead-letter table; 404 for
// an unknown table. The change is stored and reaches the Iceberg metadata
// (its properties) in one transaction under the table's row lock, as a
// metadata file that changes no snapshot: snapshot expiry and manifest
// merging read their settings there, the writer the rest from the row.
func (h *Handler) setProperties(w http.ResponseWriter, r *http.Request) {
	var c tables.PropertyChange
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		writeError(w, http.StatusBadRequest, `invalid property change (want {"set":{"k":"v"},"remove":["k"]}): `+err.Error())
		return
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, "invalid property change: unexpected data after the JSON object")
		return
	}
	t, ok := h.lookup(w, r)
	if !ok {
		return
	}
	if t.DLQOf != nil {
		h.fail(w, fmt.Errorf("%w: %s is a dead-letter table: change the properties of its table", tables.ErrInvalid, t.FullName()))
		return
	}
	out, err := ChangeProperties(r.Context(), h.pool, t, c)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.cfg.Logger.Info("admin: table properties changed", "table", t.FullName(), "set", len(c.Set), "removed", len(c.Remove))
	writeJSON(w, http.StatusOK, out)
}

// ChangeProperties applies c to the properties of table t and of its
// dead-letter table (which got t's at create), in their rows and current
// metadata files, in one transaction that holds both row locks (table,
// then dead-letter table: the order of every commit that takes both), and
// returns t as changed. Errors wrap tables.ErrInvalid for a change
// tables.PropertyChange.Apply refuses.
func ChangeProperties(ctx context.Context, db tables.Beginner, t *tables.Table, c tables.PropertyChange) (*tables.Table, error) {
	var out *tables.Table
	err := pgx.BeginTxFunc(ctx, db, pgx.TxOptions{}, func(tx pgx.Tx) error {
		dlq, err := tables.DLQ(ctx, tx, t.ID)
		if err != nil {
			return err
		}
		for _, x := range []*tables.Table{t, dlq} {
			if x == nil {
				continue
			}
			h, err := commit.Lock(ctx, tx, x, t)
			if err != nil {
				return err
			}
			cur, err := tables.Get(ctx, tx, x.ID) // under the lock: no change is lost
			if err != nil {
				return err
			}
			props, err := c.Apply(cur)
			if err != nil {
				return err
			}
			if err := tables.SetProperties(ctx, tx, x.ID, props); err != nil {
				return err
			}
			md, err := h.Parsed()
			if err != nil {
				return err
			}
			upd, err := icebergmeta.SetProperties(h.MetadataLocation, h.Metadata, md, c.Set, c.Remove)
			if err != nil {
				return fmt.Errorf("%w: %w", tables.ErrInvalid, err)
			}
			if upd != nil {
				if err := commit.StoreMetadata(ctx, tx, h, upd, nil); err != nil {
					return err
				}
			}
			if x == t {
				cur.Properties, cur.MetadataLocation = props, h.MetadataLocation
				out = cur
			}
		}
		return nil
	})
	return out, err
}
