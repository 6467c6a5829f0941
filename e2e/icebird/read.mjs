// Reads a Mink table with icebird, an Iceberg reader in JavaScript (on
// hyparquet), as a second reader next to apache/iceberg-go:
//
//	node read.mjs <catalog URL> <namespace>.<table>
//
// It loads the table through the REST catalog (GET
// /v1/namespaces/{ns}/tables/{table}), reads every row of the current
// snapshot through the S3 API at the s3.endpoint the load's config names
// (path style), and prints one JSON document per row on stdout. In those
// documents an int64 (a JavaScript BigInt) is a decimal string, a
// timestamp is ISO 8601 in UTC (milliseconds: hyparquet's Date), and a
// null is null. Binary columns come back as text: hyparquet decodes a
// BYTE_ARRAY as UTF-8 unless told otherwise, and icebird does not tell it;
// bytes it does return (a Uint8Array) are printed as base64.
import { icebergRead } from 'icebird'

const [catalog, table] = process.argv.slice(2)
if (!catalog || !table || !table.includes('.')) {
  console.error('usage: node read.mjs <catalog URL> <namespace>.<table>')
  process.exit(2)
}
const dot = table.lastIndexOf('.')
// Namespace levels are joined by the unit separator (Iceberg REST spec).
const ns = table.slice(0, dot).split('.').join('\x1f')
const name = table.slice(dot + 1)

const realFetch = globalThis.fetch
const res = await realFetch(`${catalog.replace(/\/$/, '')}/v1/namespaces/${encodeURIComponent(ns)}/tables/${encodeURIComponent(name)}`)
if (!res.ok) {
  throw new Error(`load table ${table}: ${res.status} ${await res.text()}`)
}
const load = await res.json()
const endpoint = load.config?.['s3.endpoint']
if (!endpoint) throw new Error(`load table ${table}: no s3.endpoint in the config`)
if (load.config['s3.path-style-access'] !== 'true') {
  throw new Error(`load table ${table}: s3.path-style-access is not "true"`)
}

// icebird turns s3://<bucket>/<key> into https://<bucket>.s3.amazonaws.com/<key>
// (fetch.js, translateS3Url) and has no endpoint setting: send those reads
// to the catalog's S3 endpoint, path style.
const s3Host = /^https:\/\/([^/]+)\.s3\.amazonaws\.com(\/.*)$/
globalThis.fetch = (input, init) => {
  const url = input instanceof Request ? input.url : String(input)
  const m = s3Host.exec(url)
  if (!m) return realFetch(input, init)
  return realFetch(`${endpoint.replace(/\/$/, '')}/${m[1]}${m[2]}`, init).then(r => {
    if (!r.ok) throw new Error(`GET ${m[1]}${m[2]}: ${r.status}`)
    return r
  })
}

const rows = await icebergRead({ tableUrl: load.metadata.location, metadata: load.metadata })

/** JSON.stringify replacer: BigInt as a decimal string, bytes as base64. */
function replacer(_, v) {
  if (typeof v === 'bigint') return v.toString()
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64')
  return v
}
const out = []
for (const row of rows) out.push(JSON.stringify(row, replacer))
process.stdout.write(out.length ? out.join('\n') + '\n' : '')
