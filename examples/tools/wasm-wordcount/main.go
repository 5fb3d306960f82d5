//go:build wasip1

// wordcount is a WASI command module for skillgate's wasm executor: each
// call runs it once, with the arguments as JSON on stdin. What it prints on
// stdout is the result (a JSON object becomes structuredContent); lines on
// stderr reach the client as progress or log messages.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
)

type args struct {
	Text string `json:"text"`
	Top  int    `json:"top"`
}

type count struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

func main() {
	var a args
	if err := json.NewDecoder(os.Stdin).Decode(&a); err != nil {
		fmt.Fprintln(os.Stderr, "arguments are not JSON:", err)
		os.Exit(2)
	}
	if a.Top <= 0 {
		a.Top = 3
	}

	counts := map[string]int{}
	words, lines := 0, 0
	sc := bufio.NewScanner(strings.NewReader(a.Text))
	sc.Buffer(nil, len(a.Text)+1)
	for sc.Scan() {
		lines++
		for _, w := range strings.FieldsFunc(sc.Text(), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '\'' }) {
			counts[strings.ToLower(w)]++
			words++
		}
		if lines%1000 == 0 {
			// A JSON line with "progress" is a progress report.
			fmt.Fprintf(os.Stderr, "{\"progress\":%d,\"message\":\"%d lines counted\"}\n", lines, lines)
		}
	}
	// Any other line is a log message.
	fmt.Fprintf(os.Stderr, "counted %d words in %d lines\n", words, lines)

	top := make([]count, 0, len(counts))
	for w, n := range counts {
		top = append(top, count{w, n})
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].Count != top[j].Count {
			return top[i].Count > top[j].Count
		}
		return top[i].Word < top[j].Word
	})
	top = top[:min(a.Top, len(top))]

	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"words":      words,
		"lines":      lines,
		"characters": len([]rune(a.Text)),
		"top":        top,
	})
}
