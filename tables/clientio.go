package tables

import "strings"

// clientSettingPrefixes start the keys an engine's FileIO or catalog
// client reads to configure its storage access, endpoints, proxies,
// credentials or HTTP client: PyIceberg's pyiceberg/io/__init__.py (s3.*,
// gcs.*, adls.*, hf.*, hdfs.*, client.*) and catalog/rest (rest.*,
// header.*), Iceberg Java's S3FileIOProperties, AwsProperties,
// HttpClientProperties, GCPProperties, AzureProperties and
// AliyunProperties (s3., client., http-client., glue., sts., dynamodb.,
// lakeformation., gcs., adls., oss.).
var clientSettingPrefixes = []string{
	"s3.", "gcs.", "gs.", "adls.", "azure.", "hf.", "hdfs.", "oss.", "client.", "http-client.",
	"rest.", "header.", "aws.", "glue.", "sts.", "dynamodb.", "lakeformation.", "s3tables.",
}

// clientSettingKeys are whole keys of the same kind: the FileIO to load
// (py-io-impl, io-impl), the catalog's endpoint and warehouse (uri,
// warehouse, prefix) and the OAuth2 settings of Iceberg's REST clients
// (token, credential, oauth2-server-uri, scope, audience, resource,
// OAuth2Properties).
var clientSettingKeys = []string{
	"py-io-impl", "io-impl", "uri", "warehouse", "prefix", "token", "credential",
	"oauth2-server-uri", "scope", "audience", "resource",
}

// ClientSetting reports whether table property k would configure a
// reader's IO or credentials rather than describe the table: PyIceberg
// merges a loaded table's properties into its FileIO settings, so such a
// property could send every reader's requests, with the credentials Mink
// vends, through another endpoint or proxy, or load other code. It is
// every key of clientSettingPrefixes and clientSettingKeys, every key
// starting with "token" (token-refresh-enabled …), and every key ending in
// ".impl" or "-impl" (a class to load, such as
// write.py-location-provider.impl) or ".path" (a file or folder to use,
// such as write.data.path, downloaded-file.path). Case is ignored.
func ClientSetting(k string) bool {
	k = strings.ToLower(k)
	for _, p := range clientSettingPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	for _, c := range clientSettingKeys {
		if k == c {
			return true
		}
	}
	return strings.HasPrefix(k, "token") || strings.HasSuffix(k, ".impl") || strings.HasSuffix(k, "-impl") ||
		strings.HasSuffix(k, ".path")
}
