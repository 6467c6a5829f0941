// Package devenv is `mink dev`: a throwaway PostgreSQL from the system's
// binaries, an in-process Kafka (franz-go's kfake), one or more Mink nodes,
// and a demo table filled from real data (the USGS earthquake feed in
// ../shared/data). Tests use the same pieces.
package devenv
