package redact_test

import (
	"fmt"

	"github.com/skillgate/skillgate/internal/redact"
)

func ExampleURL() {
	fmt.Println(redact.URL("https://bob:hunter2@api.example.com/mcp?api_key=k1"))
	// Output: https://bob:xxxxx@api.example.com/mcp?api_key=xxxxx
}

func ExampleSecrets() {
	s := redact.NewSecrets("tok-123456", "true") // "true" is too short to mask
	fmt.Println(s.Mask("started with API_TOKEN=tok-123456 DEBUG=true"))
	// Output: started with API_TOKEN=xxxxx DEBUG=true
}
