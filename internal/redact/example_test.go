package redact_test

import (
	"fmt"

	"github.com/skillgate/skillgate/internal/redact"
)

func ExampleURL() {
	fmt.Println(redact.URL("https://bob:hunter2@api.example.com/mcp?api_key=k1"))
	// Output: https://bob:xxxxx@api.example.com/mcp?api_key=xxxxx
}
