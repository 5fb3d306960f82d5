// Package names holds the one rule every name the gateway exposes or
// accepts follows: tool, server, executor, pipeline and namespace names must
// be valid tool names for LLM APIs, ^[a-zA-Z0-9_-]{1,64}$.
//
// It is a loop rather than a regular expression: the bounded repeat would
// compile into 64 copies of the class in every package that declared it,
// paid at every process start.
package names

// Max is the longest valid name, in bytes.
const Max = 64

// Byte reports whether c may appear in a name.
func Byte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// Valid reports whether s matches ^[a-zA-Z0-9_-]{1,64}$.
func Valid(s string) bool {
	if len(s) == 0 || len(s) > Max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !Byte(s[i]) {
			return false
		}
	}
	return true
}
