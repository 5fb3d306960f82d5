package pos

import "testing"

func TestString(t *testing.T) {
	for _, tc := range []struct {
		p    Pos
		want string
	}{
		{Pos{"a.yaml", 3, 7}, "a.yaml:3:7"},
		{Pos{"a.yaml", 3, 0}, "a.yaml:3"},
		{Pos{"a.yaml", 0, 7}, "a.yaml"},
		{Pos{"", 3, 7}, "3:7"},
		{Pos{}, ""},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.p, got, tc.want)
		}
	}
}
