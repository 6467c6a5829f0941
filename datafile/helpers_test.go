package datafile_test

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
)

func sha(b []byte) [32]byte { return sha256.Sum256(b) }

func float64frombits(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) }
