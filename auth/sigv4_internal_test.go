package auth

import (
	"encoding/hex"
	"net/http"
	"testing"
	"time"
)

// The examples of the Amazon S3 API Reference, "Signature Calculations
// for the Authorization Header: Transferring Payload in a Single Chunk"
// and "Authenticating Requests: Using Query Parameters": AWS's published
// signatures, computed here from the requests.
func TestAWSExampleSignatures(t *testing.T) {
	const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	now := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	v := &Verifier{Region: "us-east-1"}
	for _, c := range []struct {
		name, url string
		hdr       map[string]string
		presigned bool
		want      string
	}{
		{name: "GET Object", url: "https://examplebucket.s3.amazonaws.com/test.txt",
			hdr: map[string]string{"Range": "bytes=0-9", "X-Amz-Date": "20130524T000000Z", "X-Amz-Content-Sha256": emptySHA256,
				"Authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
			want: "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"},
		{name: "GET Bucket lifecycle", url: "https://examplebucket.s3.amazonaws.com/?lifecycle",
			hdr: map[string]string{"X-Amz-Date": "20130524T000000Z", "X-Amz-Content-Sha256": emptySHA256,
				"Authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"},
			want: "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"},
		{name: "GET Bucket (list objects)", url: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
			hdr: map[string]string{"X-Amz-Date": "20130524T000000Z", "X-Amz-Content-Sha256": emptySHA256,
				"Authorization": "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
			want: "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"},
		{name: "presigned GET Object", presigned: true,
			url:  "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
			want: "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"},
	} {
		r, err := http.NewRequest(http.MethodGet, c.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, val := range c.hdr {
			r.Header.Set(k, val)
		}
		var sr *signedRequest
		var serr *S3Error
		if c.presigned {
			sr, serr = v.parseQuery(r, r.URL.Query(), now)
		} else {
			sr, serr = v.parseHeader(r, r.Header.Get("Authorization"), now)
		}
		if serr != nil {
			t.Fatalf("%s: %v", c.name, serr)
		}
		got := signature(signingKey(secret, sr.scopeDate, v.Region), sr.amzDate, sr.scope,
			canonicalRequest(r.Method, canonicalPaths(r)[0], sr.query, sr.headers, sr.signedHeaders, sr.payload))
		if hex.EncodeToString(got) != c.want || hex.EncodeToString(sr.signature) != c.want {
			t.Errorf("%s: signature %x, want %s", c.name, got, c.want)
		}
	}
}

func TestURIEncode(t *testing.T) {
	for in, want := range map[string]string{
		"/a/t1~dlq/x y.json": "/a/t1~dlq/x%20y.json",
		"/é+=&?":             "/%C3%A9%2B%3D%26%3F",
	} {
		if got := uriEncode(in, false); got != want {
			t.Errorf("uriEncode(%q) = %q, want %q", in, got, want)
		}
	}
	if got := uriEncode("a/b", true); got != "a%2Fb" {
		t.Errorf("uriEncode with slash = %q", got)
	}
}
