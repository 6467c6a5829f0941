package objects

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Errors a Builder returns (wrapped or as they are) for the API to answer
// with the matching S3 error; an error wrapping outage.ErrUnavailable
// (PostgreSQL or Kafka could not be reached) answers 503 SlowDown with
// Retry-After (docs/design.md §3.4). Any other error answers 500
// InternalError.
var (
	// ErrNotFound: no data file has this key (no data_files row). Answers
	// 404 NoSuchKey.
	ErrNotFound = errors.New("data file not found")
	// ErrChecksumMismatch: the rebuilt bytes differ from the recorded size
	// or SHA-256 (for example after log compaction, docs/design.md §4.5). The bytes
	// are never served nor cached. Answers 500 InternalError.
	ErrChecksumMismatch = errors.New("rebuilt data file differs from its recorded checksum")
)

// Builder builds data files on a cache miss. It is implemented outside this
// package (it reads the range from Kafka and encodes it with datafile).
type Builder interface {
	// Build returns the bytes of the data file at key (the object key below
	// the warehouse, e.g. "demo/quakes/data/0/0-100-1.parquet"), after
	// checking them against the recorded size and SHA-256. Errors wrap
	// ErrNotFound, ErrChecksumMismatch or outage.ErrUnavailable when they are
	// those. Build may be called on any server node and must be safe for
	// concurrent use; the API calls it at most once at a time per key.
	Build(ctx context.Context, key string) ([]byte, error)
}

// SumBuilder is a Builder that also returns the SHA-256 of the bytes it
// built (it has checked them against the recorded checksum), so that the
// server takes it for the ETag instead of hashing the bytes a second time.
type SumBuilder interface {
	Builder
	// BuildSum is Build that also returns SHA-256(bytes).
	BuildSum(ctx context.Context, key string) ([]byte, [sha256.Size]byte, error)
}

// BuilderFunc adapts a function to Builder.
type BuilderFunc func(ctx context.Context, key string) ([]byte, error)

// Build calls f.
func (f BuilderFunc) Build(ctx context.Context, key string) ([]byte, error) { return f(ctx, key) }

// s3Error is the XML body of an S3 error response.
type s3Error struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string   `xml:"Code"`
	Message    string   `xml:"Message"`
	BucketName string   `xml:"BucketName,omitempty"`
	Key        string   `xml:"Key,omitempty"`
	RequestID  string   `xml:"RequestId"`
}

// S3 error codes the API answers with.
const (
	codeNoSuchKey          = "NoSuchKey"
	codeNoSuchBucket       = "NoSuchBucket"
	codeMethodNotAllowed   = "MethodNotAllowed"
	codeNotImplemented     = "NotImplemented"
	codeInternalError      = "InternalError"
	codeSlowDown           = "SlowDown"
	codeInvalidRange       = "InvalidRange"
	codePreconditionFailed = "PreconditionFailed"
	codeAccessDenied       = "AccessDenied"
)

// newRequestID returns a random id for x-amz-request-id and error bodies:
// 16 hex digits that never hold "301". gocloud.dev's s3blob before v0.47
// (the S3 client of iceberg-go v0.7) takes any failed request whose error
// text holds "301" for S3's redirect of a missing bucket, NotFound
// (google/go-cloud#3746), and that text holds the request id: about one
// error in 290 (14 places of 4,096) read as "file does not exist" instead
// of what it was, such as the 500 of a rebuild that no longer matches its
// checksum (e2e TestCompactionReindexes).
func newRequestID() string {
	for {
		var b [8]byte
		_, _ = rand.Read(b[:])
		if id := hex.EncodeToString(b[:]); !strings.Contains(id, "301") {
			return id
		}
	}
}

// errorBody renders an S3 error document.
func errorBody(e s3Error) []byte {
	b, err := xml.Marshal(e)
	if err != nil {
		// Only strings are marshalled; this cannot happen.
		panic(err)
	}
	return append([]byte(xml.Header), b...)
}

// writeError answers an S3 error. HEAD answers carry no body, as S3's do.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, status int, e s3Error) {
	h := w.Header()
	if e.RequestID == "" {
		e.RequestID = h.Get("x-amz-request-id")
	}
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(int((s.cfg.RetryAfter+time.Second-1)/time.Second)))
	}
	body := errorBody(e)
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
