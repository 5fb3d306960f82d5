package childproc

import (
	"maps"
	"testing"
)

// PassEnv passes the names and prefixes it is given, as the environment
// spells them, and nothing else; an unset name is absent.
func TestPassEnv(t *testing.T) {
	environ := []string{
		"AWS_PROFILE=dev", "AWS_REGION=eu-west-1", "AWSX=no", "KUBECONFIG=/k", "GITHUB_TOKEN=secret",
		"Https_Proxy=http://proxy:3128", "=C:=C:\\work", "NOVALUE",
	}
	for _, tc := range []struct {
		name  string
		names []string
		fold  bool
		want  map[string]string
	}{
		{"exact", []string{"KUBECONFIG", "UNSET"}, false, map[string]string{"KUBECONFIG": "/k"}},
		{"prefix", []string{"AWS_*"}, false, map[string]string{"AWS_PROFILE": "dev", "AWS_REGION": "eu-west-1"}},
		{"a lone star is no prefix", []string{"*"}, false, map[string]string{}},
		{"case matters on unix", []string{"HTTPS_PROXY", "kubeconfig"}, false, map[string]string{}},
		{"case folds on windows", []string{"HTTPS_PROXY", "aws_*"}, true,
			map[string]string{"Https_Proxy": "http://proxy:3128", "AWS_PROFILE": "dev", "AWS_REGION": "eu-west-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := passEnv(environ, tc.names, tc.fold); !maps.Equal(got, tc.want) {
				t.Errorf("PassEnv(%q) = %v; want %v", tc.names, got, tc.want)
			}
		})
	}
	if got := PassEnv([]string{"A=1", "B=2"}, []string{"B"}); !maps.Equal(got, map[string]string{"B": "2"}) {
		t.Errorf("PassEnv = %v; want B=2", got)
	}
}
