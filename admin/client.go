package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/minkhq/mink/auth"
	"github.com/minkhq/mink/tables"
	"github.com/minkhq/mink/writer"
)

// Client calls the admin API of a node; `mink` (the command line) and
// `mink dev` use it. Each call gives up after 30 seconds.
type Client struct {
	// URL is the node's base URL, e.g. "http://127.0.0.1:8181".
	URL string
	// Credential is an admin principal's "CLIENT_ID:SECRET": each call
	// carries a bearer token got with it from the node's
	// POST /v1/oauth/tokens (kept until a minute before it expires).
	// Empty: no token (a node with auth none).
	Credential string

	mu     sync.Mutex
	tokens *auth.TokenSource
}

// token returns a bearer token for c.Credential.
func (c *Client) token(ctx context.Context) (string, error) {
	c.mu.Lock()
	if c.tokens == nil || c.tokens.URL != c.URL || c.tokens.Credential != c.Credential {
		c.tokens = &auth.TokenSource{URL: c.URL, Credential: c.Credential}
	}
	ts := c.tokens
	c.mu.Unlock()
	return ts.Token(ctx)
}

// StatusError is an answer of the admin API other than 2xx.
type StatusError struct {
	// Status is the HTTP status line's text, e.g. "404 Not Found".
	Status string
	Code   int
	// Message is the answer's error message, or its body when it has none.
	Message string
	// Body is the answer's body as it came.
	Body []byte
}

func (e *StatusError) Error() string { return e.Status + ": " + e.Message }

// callTimeout bounds one call, its answer read included.
const callTimeout = 30 * time.Second

// Do sends body (JSON-encoded, unless nil) with method to path below the
// node's URL and decodes a JSON answer into out (unless nil). Errors: a
// *StatusError for an answer other than 2xx; the http.Client's error when
// the node could not be reached.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Credential != "" {
		tok, err := c.token(ctx)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		e := errorBody{}
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return &StatusError{Status: resp.Status, Code: resp.StatusCode, Message: e.Error, Body: b}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("admin: answer of %s %s: %w", method, path, err)
		}
	}
	return nil
}

// CreateTable creates a table from def (tables.Definition, or any value
// that encodes as one) and returns it.
func (c *Client) CreateTable(ctx context.Context, def any) (*tables.Table, error) {
	t, err := c.CreateTablePlan(ctx, def)
	if err != nil {
		return nil, err
	}
	return t.Table, nil
}

// CreateTablePlan creates a table from def and returns it with its plan
// (nil unless a registry format).
func (c *Client) CreateTablePlan(ctx context.Context, def any) (*CreatedTable, error) {
	t := CreatedTable{Table: new(tables.Table)}
	if err := c.Do(ctx, http.MethodPost, "/admin/v1/tables", def, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// PlanTable returns what a create of def would do, storing nothing (POST
// /admin/v1/tables?dry_run=true).
func (c *Client) PlanTable(ctx context.Context, def any) (*CreatePlan, error) {
	var p CreatePlan
	if err := c.Do(ctx, http.MethodPost, "/admin/v1/tables?dry_run=true", def, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Tables returns every table, dead-letter tables included, by name.
func (c *Client) Tables(ctx context.Context) ([]*tables.Table, error) {
	var l TableList
	err := c.Do(ctx, http.MethodGet, "/admin/v1/tables", nil, &l)
	return l.Tables, err
}

// TableJSON returns the table named "<namespace>.<name>" as the API
// answers it.
func (c *Client) TableJSON(ctx context.Context, name string) (json.RawMessage, error) {
	var t json.RawMessage
	err := c.Do(ctx, http.MethodGet, "/admin/v1/tables/"+name, nil, &t)
	return t, err
}

// DeleteTable deletes the table named "<namespace>.<name>" and its
// dead-letter table.
func (c *Client) DeleteTable(ctx context.Context, name string) error {
	return c.Do(ctx, http.MethodDelete, "/admin/v1/tables/"+name, nil, nil)
}

// Partitions returns the progress of the partitions of the table named
// "<namespace>.<name>".
func (c *Client) Partitions(ctx context.Context, name string) (*TablePartitions, error) {
	var p TablePartitions
	if err := c.Do(ctx, http.MethodGet, "/admin/v1/tables/"+name+"/partitions", nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// TableStatus returns the status of the table named "<namespace>.<name>".
func (c *Client) TableStatus(ctx context.Context, name string) (*TableStatus, error) {
	var st TableStatus
	if err := c.Do(ctx, http.MethodGet, "/admin/v1/tables/"+name+"/status", nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// Nodes returns the live nodes, by id.
func (c *Client) Nodes(ctx context.Context) ([]NodeStatus, error) {
	var l NodeList
	err := c.Do(ctx, http.MethodGet, "/admin/v1/nodes", nil, &l)
	return l.Nodes, err
}

// Overview returns the cluster as `mink status` prints it: the live nodes
// and the status of every table but dead-letter tables (table ""), or of
// the table named "<namespace>.<name>" alone.
func (c *Client) Overview(ctx context.Context, table string) (*Overview, error) {
	path := "/admin/v1/overview"
	if table != "" {
		path += "?" + url.Values{"table": {table}}.Encode()
	}
	var o Overview
	if err := c.Do(ctx, http.MethodGet, path, nil, &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// Leases returns every lease, by table name, the writer lease first.
func (c *Client) Leases(ctx context.Context) ([]LeaseStatus, error) {
	var l LeaseList
	err := c.Do(ctx, http.MethodGet, "/admin/v1/leases", nil, &l)
	return l.Leases, err
}

// AlterTable evolves the columns of the json table named
// "<namespace>.<name>" to take schema (an Iceberg schema JSON, as for a
// create). A change Iceberg does not allow is a *StatusError of code 400
// whose Message is the evolution error.
func (c *Client) AlterTable(ctx context.Context, name string, schema json.RawMessage) (*AlterResult, error) {
	var res AlterResult
	if err := c.Do(ctx, http.MethodPost, "/admin/v1/tables/"+name+"/schema", schema, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetProperties changes the properties of the table named
// "<namespace>.<name>" (POST /admin/v1/tables/{name}/properties) and
// returns the table as changed.
func (c *Client) SetProperties(ctx context.Context, name string, change tables.PropertyChange) (*tables.Table, error) {
	var t tables.Table
	if err := c.Do(ctx, http.MethodPost, "/admin/v1/tables/"+name+"/properties", change, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// RepairTable runs one batch of the repair of the table named
// "<namespace>.<name>" (writer.Repair): at most opts.Limit ranges, after
// opts.After.
func (c *Client) RepairTable(ctx context.Context, name string, opts writer.RepairOptions) (*writer.RepairResult, error) {
	q := url.Values{}
	if opts.Limit > 0 {
		q.Set("limit", strconv.Itoa(opts.Limit))
	}
	if opts.After != nil {
		q.Set("after", FormatPosition(*opts.After))
	}
	path := "/admin/v1/tables/" + name + "/repair"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var res writer.RepairResult
	if err := c.Do(ctx, http.MethodPost, path, nil, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
