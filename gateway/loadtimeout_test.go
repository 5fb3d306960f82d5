package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testenv"
	"github.com/skillgate/skillgate/plugins/sdk"
)

// envHangLoad makes the test binary, run as a plugin (writeProbe), an
// executor whose Load never returns and ignores its context.
const envHangLoad = "SKILLGATE_GATEWAY_TEST_HANG_LOAD"

func init() {
	if os.Getenv(envHangLoad) != "" {
		sdk.Serve(hangLoad{})
		os.Exit(0)
	}
}

// hangLoad is an executor whose Load ignores its context and never
// returns, as a third party's buggy one may.
type hangLoad struct{}

func (hangLoad) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "hang", Version: "1", Kinds: []string{"hang"}}, nil
}

func (hangLoad) Load(context.Context, sdk.LoadRequest) (sdk.Definitions, error) {
	time.Sleep(time.Hour)
	return sdk.Definitions{}, nil
}

func (hangLoad) Unload(context.Context, string) error { return nil }

func (hangLoad) Call(context.Context, sdk.CallRequest, sdk.Call) (json.RawMessage, error) {
	return nil, sdk.ErrUnsupported
}

// Eight plugins whose Load hangs take every slot of the first loads: each
// fails once limits.load_timeout passes, saying why, is retried, and
// frees its slot for a ninth, healthy plugin, which serves; Start
// returns. Closing the gateway leaves no process behind.
func TestLoadTimeoutFreesTheStart(t *testing.T) {
	testenv.Subreaper(t)
	dir := t.TempDir()
	for i := 1; i <= 8; i++ {
		writeProbe(t, dir, "h"+strconv.Itoa(i), envHangLoad+"=1 ")
	}
	installProbe(t, dir, "zok")
	r := startGateway(t, "plugins: {dirs: ["+dir+"]}\nlimits: {load_timeout: 2s, plugin_kill_window: 1s}\n", nil)
	r.waitReady(t, "zok")
	// zok took the first slot freed; the other hung loads end about then.
	var st map[string]gateway.SourceStatus
	var log string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, log = r.status(t), r.log.String()
		if strings.Count(log, `msg="source failed to load"`) >= 8 || time.Now().After(deadline) {
			break
		}
	}
	for i := 1; i <= 8; i++ {
		name := "h" + strconv.Itoa(i)
		// A retry may have found the plugin restarting since; its error
		// gives the same reason.
		if s := st[name]; s.State != "failed" || !strings.Contains(s.LastError, "did not answer Load") {
			t.Errorf("%s: %+v, want failed, not answering Load", name, s)
		}
		want := `level=ERROR msg="source failed to load" source=` + name + ` executor=` + name + ` err="executor \"` + name +
			`\" did not answer Load within 2s; it must return from Load or honour its context; see docs/EXECUTORS.md`
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
	if text, _ := toolText(t, r, "zok__pid", `{}`); text == "" {
		t.Errorf("zok__pid answered nothing")
	}
	if err := r.gw.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitNoChildren(t, 30*time.Second)
}
