package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// S3 error codes of refused requests (Amazon S3 API Reference, "Error
// responses"), with the HTTP status S3 answers each with.
const (
	CodeAccessDenied                    = "AccessDenied"                      // 403
	CodeExpiredToken                    = "ExpiredToken"                      // 400
	CodeInvalidToken                    = "InvalidToken"                      // 400
	CodeSignatureDoesNotMatch           = "SignatureDoesNotMatch"             // 403
	CodeInvalidAccessKeyID              = "InvalidAccessKeyId"                // 403
	CodeAuthorizationHeaderMalformed    = "AuthorizationHeaderMalformed"      // 400
	CodeAuthorizationQueryParametersErr = "AuthorizationQueryParametersError" // 400
	CodeRequestTimeTooSkewed            = "RequestTimeTooSkewed"              // 403
	CodeInvalidRequest                  = "InvalidRequest"                    // 400
	CodeInvalidArgument                 = "InvalidArgument"                   // 400
	CodeXAmzContentSHA256Mismatch       = "XAmzContentSHA256Mismatch"         // 400
)

// S3Error is a request the Verifier refuses: the S3 error code and HTTP
// status to answer it with.
type S3Error struct {
	Status  int
	Code    string
	Message string
}

func (e *S3Error) Error() string { return "auth: " + e.Code + ": " + e.Message }

func s3err(status int, code, format string, args ...any) *S3Error {
	return &S3Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Limits of AWS Signature V4 (Amazon S3 API Reference, "Authenticating
// Requests (AWS Signature Version 4)").
const (
	// MaxClockSkew is how far a signed request's X-Amz-Date may be from
	// the server's clock.
	MaxClockSkew = 15 * time.Minute
	// MaxPresignedExpires is the largest X-Amz-Expires of a presigned URL
	// (7 days).
	MaxPresignedExpires = 7 * 24 * time.Hour
)

const (
	algorithm       = "AWS4-HMAC-SHA256"
	amzDateFormat   = "20060102T150405Z"
	scopeDateFormat = "20060102"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	emptySHA256     = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// Verifier checks S3 requests signed with AWS Signature Version 4 by
// credentials Vend made: in the Authorization header or in a presigned
// URL's query. It is safe for concurrent use.
type Verifier struct {
	// Key is the credentials key (DeriveKey(secret, PurposeCredentials)).
	Key []byte
	// Region is the region every credential scope must name (the node's
	// s3.region, catalog.Config.Region).
	Region string
	// Active, when set, reports whether a principal may still read (not
	// revoked); a principal that may not is refused with AccessDenied.
	// Its errors are returned as they are (not *S3Error).
	Active func(ctx context.Context, principal string) (bool, error)
}

// Verify checks r's signature at time now and returns the credentials it
// was signed with. A refusal is an *S3Error, in this order:
//   - no signature: 403 AccessDenied; both a header and a query
//     signature: 400 InvalidArgument;
//   - a malformed Authorization header or presigned query, or a
//     credential scope of another date, region or service: 400
//     AuthorizationHeaderMalformed / AuthorizationQueryParametersError;
//   - an x-amz-* header sent but not among the signed headers (header or
//     presigned signature): 403 AccessDenied, as S3 answers;
//   - a header signature whose X-Amz-Date is more than MaxClockSkew from
//     now: 403 RequestTimeTooSkewed; a presigned URL past X-Amz-Date +
//     X-Amz-Expires (or not valid yet): 403 AccessDenied;
//   - no session token, or one of another access key id: 403
//     InvalidAccessKeyId; a token Mink did not vend: 400 InvalidToken; past
//     its expiration: 400 ExpiredToken;
//   - a signature that is not the one the credentials make: 403
//     SignatureDoesNotMatch;
//   - an X-Amz-Content-Sha256 other than UNSIGNED-PAYLOAD or the hash of
//     the empty body (only GET and HEAD are served): 400
//     XAmzContentSHA256Mismatch;
//   - a revoked principal (Active): 403 AccessDenied.
//
// Errors of Active are returned wrapped. Verify does not check which key
// the request reads: see Credentials.AllowsKey.
func (v *Verifier) Verify(r *http.Request, now time.Time) (*Credentials, error) {
	authz := r.Header.Get("Authorization")
	query, _ := url.ParseQuery(r.URL.RawQuery)
	presigned := query.Has("X-Amz-Algorithm") || query.Has("X-Amz-Signature") || query.Has("X-Amz-Credential")
	var sr *signedRequest
	var serr *S3Error
	switch {
	case authz == "" && !presigned:
		return nil, s3err(http.StatusForbidden, CodeAccessDenied,
			"Anonymous access is not allowed: sign requests with the credentials the catalog vends.")
	case authz != "" && presigned:
		return nil, s3err(http.StatusBadRequest, CodeInvalidArgument, "Only one auth mechanism allowed.")
	case presigned:
		sr, serr = v.parseQuery(r, query, now)
	default:
		sr, serr = v.parseHeader(r, authz, now)
	}
	if serr != nil {
		return nil, serr
	}
	if serr := unsignedAmzHeaders(r, sr.signedHeaders); serr != nil {
		return nil, serr
	}

	if sr.token == "" {
		return nil, s3err(http.StatusForbidden, CodeInvalidAccessKeyID,
			"The AWS Access Key Id you provided does not exist in our records.")
	}
	c, err := ParseToken(v.Key, sr.token)
	if err != nil {
		return nil, s3err(http.StatusBadRequest, CodeInvalidToken, "The provided token is malformed or otherwise invalid.")
	}
	if c.AccessKeyID != sr.accessKeyID {
		return nil, s3err(http.StatusForbidden, CodeInvalidAccessKeyID,
			"The AWS Access Key Id you provided does not exist in our records.")
	}
	if !now.Before(c.Expiration) {
		return nil, s3err(http.StatusBadRequest, CodeExpiredToken, "The provided token has expired.")
	}

	key := signingKey(c.SecretAccessKey, sr.scopeDate, v.Region)
	ok := false
	for _, path := range canonicalPaths(r) {
		want := signature(key, sr.amzDate, sr.scope, canonicalRequest(r.Method, path, sr.query, sr.headers, sr.signedHeaders, sr.payload))
		if hmac.Equal(want, sr.signature) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, s3err(http.StatusForbidden, CodeSignatureDoesNotMatch,
			"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	}
	if sr.payload != unsignedPayload && sr.payload != emptySHA256 {
		return nil, s3err(http.StatusBadRequest, CodeXAmzContentSHA256Mismatch,
			"The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	if v.Active != nil {
		active, err := v.Active(r.Context(), c.Principal)
		if err != nil {
			return nil, fmt.Errorf("auth: checking principal %q: %w", c.Principal, err)
		}
		if !active {
			return nil, s3err(http.StatusForbidden, CodeAccessDenied, "Access Denied: the credentials' principal was revoked.")
		}
	}
	return &c, nil
}

// signedRequest is what a request's signature covers, parsed from its
// Authorization header or its presigned query.
type signedRequest struct {
	accessKeyID   string
	amzDate       string
	scopeDate     string
	scope         string // <date>/<region>/s3/aws4_request
	signedHeaders []string
	headers       []string // canonical "name:value" of each signed header
	query         string   // canonical query string
	payload       string   // hashed payload of the canonical request
	signature     []byte
	token         string
}

func (v *Verifier) parseHeader(r *http.Request, authz string, now time.Time) (*signedRequest, *S3Error) {
	malformed := func(format string, args ...any) *S3Error {
		return s3err(http.StatusBadRequest, CodeAuthorizationHeaderMalformed,
			"The authorization header is malformed; "+format, args...)
	}
	rest, ok := strings.CutPrefix(authz, algorithm+" ")
	if !ok {
		return nil, malformed("the authorization mechanism must be %s.", algorithm)
	}
	fields := map[string]string{}
	for f := range strings.SplitSeq(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok || fields[k] != "" {
			return nil, malformed("the component %q is malformed or repeated.", f)
		}
		fields[k] = val
	}
	credential, signed, sig := fields["Credential"], fields["SignedHeaders"], fields["Signature"]
	if credential == "" || signed == "" || sig == "" || len(fields) != 3 {
		return nil, malformed("it must have exactly Credential, SignedHeaders and Signature.")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	t, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return nil, s3err(http.StatusForbidden, CodeAccessDenied,
			"AWS authentication requires a valid X-Amz-Date header (%s).", amzDateFormat)
	}
	if d := now.Sub(t); d > MaxClockSkew || d < -MaxClockSkew {
		return nil, s3err(http.StatusForbidden, CodeRequestTimeTooSkewed,
			"The difference between the request time and the server's time is too large.")
	}
	sr := &signedRequest{amzDate: amzDate, token: r.Header.Get("X-Amz-Security-Token")}
	if msg := v.parseCredential(sr, credential, t); msg != "" {
		return nil, malformed("%s", msg)
	}
	if sr.signature, err = hex.DecodeString(sig); err != nil || len(sr.signature) != sha256.Size {
		return nil, malformed("the signature is not 64 hexadecimal digits.")
	}
	if msg := parseSignedHeaders(sr, r, signed); msg != "" {
		return nil, malformed("%s", msg)
	}
	sr.payload = r.Header.Get("X-Amz-Content-Sha256")
	if sr.payload == "" {
		return nil, s3err(http.StatusBadRequest, CodeInvalidRequest,
			"Missing required header for this request: x-amz-content-sha256")
	}
	sr.query = canonicalQuery(r.URL.RawQuery, "")
	return sr, nil
}

func (v *Verifier) parseQuery(r *http.Request, q url.Values, now time.Time) (*signedRequest, *S3Error) {
	bad := func(format string, args ...any) *S3Error {
		return s3err(http.StatusBadRequest, CodeAuthorizationQueryParametersErr,
			"Error parsing the X-Amz-Credential parameters; "+format, args...)
	}
	for _, p := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		if len(q[p]) != 1 || q.Get(p) == "" {
			return nil, bad("a presigned URL needs exactly one %s.", p)
		}
	}
	if q.Get("X-Amz-Algorithm") != algorithm {
		return nil, bad("X-Amz-Algorithm must be %s.", algorithm)
	}
	amzDate := q.Get("X-Amz-Date")
	t, err := time.Parse(amzDateFormat, amzDate)
	if err != nil {
		return nil, bad("X-Amz-Date must be %s.", amzDateFormat)
	}
	expires, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || expires < 1 || expires > int64(MaxPresignedExpires/time.Second) {
		return nil, bad("X-Amz-Expires must be 1 to %d seconds.", int64(MaxPresignedExpires/time.Second))
	}
	if t.Sub(now) > MaxClockSkew {
		return nil, s3err(http.StatusForbidden, CodeAccessDenied, "Request is not valid yet.")
	}
	if now.After(t.Add(time.Duration(expires) * time.Second)) {
		return nil, s3err(http.StatusForbidden, CodeAccessDenied, "Request has expired.")
	}
	sr := &signedRequest{amzDate: amzDate, token: q.Get("X-Amz-Security-Token"), payload: unsignedPayload}
	if msg := v.parseCredential(sr, q.Get("X-Amz-Credential"), t); msg != "" {
		return nil, bad("%s", msg)
	}
	if sr.signature, err = hex.DecodeString(q.Get("X-Amz-Signature")); err != nil || len(sr.signature) != sha256.Size {
		return nil, bad("X-Amz-Signature is not 64 hexadecimal digits.")
	}
	if msg := parseSignedHeaders(sr, r, q.Get("X-Amz-SignedHeaders")); msg != "" {
		return nil, bad("%s", msg)
	}
	sr.query = canonicalQuery(r.URL.RawQuery, "X-Amz-Signature")
	return sr, nil
}

// parseCredential reads <access key id>/<date>/<region>/s3/aws4_request
// into sr, or returns what is wrong with it.
func (v *Verifier) parseCredential(sr *signedRequest, credential string, t time.Time) string {
	parts := strings.Split(credential, "/")
	if len(parts) != 5 || parts[0] == "" {
		return "the credential must be <access key id>/<date>/<region>/s3/aws4_request."
	}
	sr.accessKeyID, sr.scopeDate = parts[0], parts[1]
	switch {
	case parts[1] != t.UTC().Format(scopeDateFormat):
		return fmt.Sprintf("the credential's date %q is not X-Amz-Date's day.", parts[1])
	case parts[2] != v.Region:
		return fmt.Sprintf("the region %q is wrong; expecting %q.", parts[2], v.Region)
	case parts[3] != "s3":
		return fmt.Sprintf("the service %q is wrong; expecting \"s3\".", parts[3])
	case parts[4] != "aws4_request":
		return "the credential must end with aws4_request."
	}
	sr.scope = strings.Join(parts[1:], "/")
	return ""
}

// parseSignedHeaders reads the signed header names (lower case, sorted,
// host among them) and the canonical lines of their values in r.
func parseSignedHeaders(sr *signedRequest, r *http.Request, signed string) string {
	sr.signedHeaders = strings.Split(signed, ";")
	if len(sr.signedHeaders) > 64 {
		return "too many signed headers."
	}
	for i, h := range sr.signedHeaders {
		if h == "" || h != strings.ToLower(h) || (i > 0 && h <= sr.signedHeaders[i-1]) {
			return "the signed headers must be distinct lower-case names in order."
		}
	}
	if !slices.Contains(sr.signedHeaders, "host") {
		return "the host header must be signed."
	}
	for _, h := range sr.signedHeaders {
		var val string
		if h == "host" {
			val = r.Host
		} else {
			// Values is the request's own slice: trimmed copies go in vals.
			var vals []string
			for _, s := range r.Header.Values(h) {
				vals = append(vals, strings.Join(strings.Fields(s), " "))
			}
			val = strings.Join(vals, ",")
		}
		sr.headers = append(sr.headers, h+":"+val)
	}
	return ""
}

// unsignedAmzHeaders refuses a request that sends an x-amz-* header its
// signature does not cover (its session token, date, content hash or any
// other): S3 answers 403 AccessDenied "There were headers present in the
// request which were not signed" (Amazon S3 API Reference, "Signature
// Calculations for the Authorization Header": every x-amz-* header sent
// must be signed). Host is checked by parseSignedHeaders. Other headers
// (Content-Type among them) are not required: GET and HEAD have no body,
// and S3 does not refuse them unsigned either.
func unsignedAmzHeaders(r *http.Request, signed []string) *S3Error {
	var missing []string
	for name := range r.Header {
		h := strings.ToLower(name)
		if strings.HasPrefix(h, "x-amz-") && !slices.Contains(signed, h) {
			missing = append(missing, h)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return s3err(http.StatusForbidden, CodeAccessDenied,
		"There were headers present in the request which were not signed: %s.", strings.Join(missing, ", "))
}

// canonicalPaths are the canonical URIs r may have been signed with. S3
// does not normalize paths: a client signs the path as it sends it
// (EscapedPath), which for the keys a client encodes strictly is also the
// AWS URI encoding of the decoded path. Both name the same key.
func canonicalPaths(r *http.Request) []string {
	strict := uriEncode(r.URL.Path, false)
	if strict == "" {
		strict = "/"
	}
	if raw := r.URL.EscapedPath(); raw != "" && raw != strict {
		return []string{strict, raw}
	}
	return []string{strict}
}

// canonicalQuery is the AWS canonical query string of rawQuery without the
// parameter skip: names and values URI-encoded, sorted by name then value.
func canonicalQuery(rawQuery, skip string) string {
	if rawQuery == "" {
		return ""
	}
	var pairs []string
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil || k == skip {
			continue
		}
		pairs = append(pairs, uriEncode(k, true)+"="+uriEncode(val, true))
	}
	slices.Sort(pairs)
	return strings.Join(pairs, "&")
}

// uriEncode is AWS's UriEncode: every byte but the unreserved characters
// (A-Z a-z 0-9 - . _ ~) as %XX upper case; '/' kept unless encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~',
			c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

func canonicalRequest(method, path, query string, headers, signedHeaders []string, payload string) string {
	var b strings.Builder
	for _, s := range []string{method, path, query} {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	for _, h := range headers {
		b.WriteString(h)
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payload)
	return b.String()
}

func hmacSHA256(key []byte, s string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// signingKey is HMAC("AWS4"+secret, date) → region → "s3" → "aws4_request".
func signingKey(secret, date, region string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, "s3")
	return hmacSHA256(k, "aws4_request")
}

// signature is the signature of a canonical request: HMAC(signing key,
// string to sign).
func signature(key []byte, amzDate, scope, canonical string) []byte {
	sum := sha256.Sum256([]byte(canonical))
	return hmacSHA256(key, algorithm+"\n"+amzDate+"\n"+scope+"\n"+hex.EncodeToString(sum[:]))
}
