package suggest

import "testing"

func TestHint(t *testing.T) {
	known := []string{"image", "ports", "healthcheck"}
	for _, tc := range []struct{ in, want string }{
		{"imagee", `did you mean "image"?`},
		{"Ports", `did you mean "ports"?`},
		{"helthcheck", `did you mean "healthcheck"?`},
		{"xyzzy", "known keys are image, ports, healthcheck"},
	} {
		if got := Hint(tc.in, known, "known keys"); got != tc.want {
			t.Errorf("Hint(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}
