package pgstore

import "time"

// Range of PostgreSQL's timestamptz in microseconds since the Unix epoch:
// 4714-11-24 00:00:00 UTC BC (Julian day 0) up to, not including,
// 294277-01-01 00:00:00 UTC (PostgreSQL's MIN_TIMESTAMP and END_TIMESTAMP,
// src/include/datatype/timestamp.h, shifted from the 2000-01-01 epoch).
const (
	MinTimestamptzMicros = -211813488000000000 + unixToPostgresMicros
	EndTimestamptzMicros = 9223371331200000000 + unixToPostgresMicros // exclusive

	unixToPostgresMicros = 946684800000000 // 1970-01-01 to 2000-01-01
)

// Timestamptz returns the argument for a nullable timestamptz column that
// holds micros (microseconds since the Unix epoch): the exact time.Time, or
// nil (NULL) when micros lies outside what timestamptz holds, so that such
// a value neither fails the write nor is stored as another instant. Every
// int64 above MinTimestamptzMicros is inside (the upper end lies past
// math.MaxInt64 microseconds).
func Timestamptz(micros int64) any {
	if micros < MinTimestamptzMicros {
		return nil
	}
	return time.UnixMicro(micros).UTC()
}
