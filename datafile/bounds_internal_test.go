package datafile

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTruncateBounds(t *testing.T) {
	long := []byte("abcdefghijklmnopqrstuvwxyz")
	require.Equal(t, []byte("abcdefghijklmnop"), truncateBinaryLower(long))
	require.Equal(t, []byte("abcdefghijklmnoq"), truncateBinaryUpper(long))
	require.Equal(t, []byte("short"), truncateBinaryUpper([]byte("short")))
	ff := []byte("a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
	require.Equal(t, []byte("b"), truncateBinaryUpper(ff))
	require.Nil(t, truncateBinaryUpper(bytes.Repeat([]byte{0xff}, 20)))

	s := []byte("ééééééééééééééééééé") // 19 code points
	require.Equal(t, []byte("éééééééééééééééé"), truncateStringLower(s))
	require.Equal(t, []byte("éééééééééééééééê"), truncateStringUpper(s))
	require.Equal(t, []byte("abc"), truncateStringUpper([]byte("abc")))
	max := []byte(string([]rune{'a', 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 0x10FFFF, 'z'}))
	require.Equal(t, []byte("b"), truncateStringUpper(max))
	// U+D7FF + 1 skips the surrogates.
	sur := []byte(string([]rune{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 0xD7FF, 'z'}))
	require.Equal(t, []byte(string([]rune{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 0xE000})), truncateStringUpper(sur))
}
