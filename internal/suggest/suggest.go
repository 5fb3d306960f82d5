// Package suggest finds the name a user probably meant, for errors such as
// `imagee: unknown key; did you mean "image"?`.
//
//	if near, ok := suggest.Closest("imagee", []string{"image", "ports"}); ok {
//		fmt.Printf("did you mean %q?", near) // did you mean "image"?
//	}
package suggest

import (
	"fmt"
	"strings"
)

// maxDistance is the largest edit distance still taken for a typo.
const maxDistance = 2

// maxLen bounds the names compared, so a hostile input costs little.
const maxLen = 64

// Closest returns the known name nearest to name (case-insensitive, at most
// two edits away; the first of equals wins), and whether there is one.
func Closest(name string, known []string) (string, bool) {
	best, bestDist := "", maxDistance+1
	for _, k := range known {
		if d := Distance(strings.ToLower(name), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best, best != ""
}

// Hint is `did you mean "x"?` for a near miss, else `<what> are a, b, c`.
func Hint(name string, known []string, what string) string {
	if near, ok := Closest(name, known); ok {
		return fmt.Sprintf("did you mean %q?", near)
	}
	return what + " are " + strings.Join(known, ", ")
}

// Distance is the Levenshtein distance between a and b in bytes; names
// longer than 64 bytes are never close.
func Distance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return maxLen + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
