package pipelines

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// everythingFake answers like server-everything's echo, get-sum and
// get-structured-content.
func everythingFake() *fakeCaller {
	return newFake(map[string]toolFunc{
		"everything__echo": func(_ context.Context, a map[string]any) (json.RawMessage, error) {
			return textResult(fmt.Sprintf("Echo: %v", a["message"])), nil
		},
		"everything__get-sum": func(_ context.Context, a map[string]any) (json.RawMessage, error) {
			x, y := a["a"].(float64), a["b"].(float64)
			return textResult(fmt.Sprintf("The sum of %v and %v is %v.", x, y, x+y)), nil
		},
		"everything__get-structured-content": func(_ context.Context, a map[string]any) (json.RawMessage, error) {
			w := map[string]map[string]any{
				"New York": {"temperature": 33, "conditions": "Cloudy", "humidity": 82},
				"Chicago":  {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82},
			}[a["location"].(string)]
			return structResult(w), nil
		},
	})
}

// The examples compile against server-everything's tool names and do what
// their descriptions say.
func TestExamples(t *testing.T) {
	ps, err := (&Loader{Tools: knownTool}).Load("../examples/pipelines")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Pipeline{}
	for _, p := range ps {
		byName[p.Name] = p
	}
	if len(ps) < 3 {
		t.Fatalf("%d examples", len(ps))
	}
	for _, tc := range []struct {
		pipeline, args string
		want           map[string]string // output -> its JSON
	}{
		{"echo_fanout", `{"messages":["a","b","c","d"]}`, map[string]string{
			"echoes":  `["Echo: msg 1: a","Echo: msg 2: b","Echo: msg 3: c","Echo: msg 4: d"]`,
			"summary": `"Echo: 4 messages echoed"`}},
		{"sum_list", `{"numbers":[1,2,3,4.5],"offset":10}`, map[string]string{
			"each": `[11,12,13,14.5]`, "total": `50.5`}},
		{"city_weather", `{"city":"Chicago"}`, map[string]string{
			"has_forecast": `true`, "report": `"Echo: Chicago: 36C, Light rain / drizzle (warm)"`}},
		{"city_weather", `{"city":"Paris"}`, map[string]string{
			"has_forecast": `false`, "forecast": `null`, "report": `"Echo: Echo: No forecast for Paris"`}},
	} {
		t.Run(tc.pipeline+tc.args, func(t *testing.T) {
			p := byName[tc.pipeline]
			if p == nil {
				t.Fatalf("no pipeline %s", tc.pipeline)
			}
			raw, err := new(Runner).Run(context.Background(), p, json.RawMessage(tc.args), everythingFake(), nil)
			if err != nil {
				t.Fatal(err)
			}
			res := decode(t, raw)
			if res.IsError {
				t.Fatal(res.text())
			}
			for k, want := range tc.want {
				got, _ := json.Marshal(res.Structured[k])
				if string(got) != want {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
			if !strings.Contains(string(p.Tool()), `"outputSchema"`) {
				t.Errorf("tool %s", p.Tool())
			}
		})
	}
}
