package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/skillgate/skillgate/internal/names"
)

const (
	// maxName is the longest name the big LLM APIs accept.
	maxName = names.Max
	// hashHex is how many hex digits of SHA-256 a shortened name carries.
	hashHex = 8
	// keepPrefix is what a shortened name keeps before "_" + hash.
	keepPrefix = maxName - 1 - hashHex
)

// ExposedName is the name an item of namespace called name is served
// under when no other item collides with it: joined with sep, then made a
// valid LLM tool name (shortened with a hash past 64 characters). Code that
// must name an item before the catalog is built (a pipeline calling
// another) uses it.
func ExposedName(namespace, sep, name string) string {
	return finalName(joinName(namespace, sep, name))
}

// joinName puts a namespace in front of a name.
func joinName(namespace, sep, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + sep + name
}

func nameByte(c byte) bool { return names.Byte(c) }

// validName reports whether s matches ^[a-zA-Z0-9_-]{1,64}$.
func validName(s string) bool { return names.Valid(s) }

// finalName turns full into a valid exposed name: each character outside
// [a-zA-Z0-9_-] (each rune, or each byte of invalid UTF-8) becomes '_', and a
// result longer than 64 is shortened with a hash of full, so two long names
// that differ anywhere, even past the cut or only in replaced characters,
// stay distinct.
func finalName(full string) string {
	if validName(full) {
		return full
	}
	if full == "" {
		return "_"
	}
	var b strings.Builder
	b.Grow(len(full))
	for _, r := range full {
		if r < 0x80 && nameByte(byte(r)) {
			b.WriteByte(byte(r))
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > maxName {
		s = s[:keepPrefix] + "_" + hash8(full)
	}
	return s
}

// withHash returns base (a valid name) with "_" + a hash of key appended,
// cut so the result stays within 64 characters.
func withHash(base, key string) string {
	if len(base) > keepPrefix {
		base = base[:keepPrefix]
	}
	return base + "_" + hash8(key)
}

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:hashHex/2])
}
