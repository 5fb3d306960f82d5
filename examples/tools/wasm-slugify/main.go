//go:build wasip1

// slugify is a reactor module for skillgate's wasm executor. The executor
// keeps warm instances of it and calls the exported function "slugify" once
// per tool call: the arguments are on stdin (read to EOF), the result goes
// to stdout, progress and log lines to stderr, and the return value is 0
// for success or anything else for a failed call.
//
// Build it with -buildmode=c-shared, which gives the module an _initialize
// export (Go's runtime and package init) instead of _start:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o slugify.wasm .
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode"
)

// main is required but never runs in a reactor.
func main() {}

type args struct {
	Text      string `json:"text"`
	Separator string `json:"separator"`
}

//go:wasmexport slugify
func slugify() int32 {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "read arguments:", err)
		return 1
	}
	var a args
	if err := json.Unmarshal(in, &a); err != nil {
		fmt.Fprintln(os.Stderr, "arguments are not JSON:", err)
		return 1
	}
	if a.Separator == "" {
		a.Separator = "-"
	}
	if strings.TrimSpace(a.Text) == "" {
		// A failed call: what is on stdout and stderr goes into the
		// error result.
		fmt.Fprintln(os.Stderr, "text is empty; give something to slugify")
		return 2
	}
	json.NewEncoder(os.Stdout).Encode(map[string]string{"slug": slug(a.Text, a.Separator)})
	return 0
}

// slug lower-cases text and joins its words (runs of letters and digits)
// with sep.
func slug(text, sep string) string {
	var words []string
	var word strings.Builder
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			word.WriteRune(unicode.ToLower(r))
		case word.Len() > 0:
			words = append(words, word.String())
			word.Reset()
		}
	}
	if word.Len() > 0 {
		words = append(words, word.String())
	}
	return strings.Join(words, sep)
}
