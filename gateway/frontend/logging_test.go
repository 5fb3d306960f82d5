package frontend

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// logSession is a legacy session as mcp-go keeps it, with a log level.
type logSession struct {
	id    string
	level mcp.LoggingLevel
	ch    chan mcp.JSONRPCNotification
}

func (s *logSession) Initialize()                                         {}
func (s *logSession) Initialized() bool                                   { return true }
func (s *logSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.ch }
func (s *logSession) SessionID() string                                   { return s.id }
func (s *logSession) SetLogLevel(l mcp.LoggingLevel)                      { s.level = l }
func (s *logSession) GetLogLevel() mcp.LoggingLevel                       { return s.level }

var _ server.SessionWithLogging = (*logSession)(nil)

// A source's log message outside any call goes to each session whose level
// lets it through, and to no other; a session that left mcp-go is skipped.
func TestDeliverLogByLevel(t *testing.T) {
	fe := New(echoRouter{}, Options{})
	ctx := context.Background()
	debug := &logSession{id: "debug", level: mcp.LoggingLevelDebug, ch: make(chan mcp.JSONRPCNotification, 8)}
	errs := &logSession{id: "error", level: mcp.LoggingLevelError, ch: make(chan mcp.JSONRPCNotification, 8)}
	gone := &logSession{id: "gone", level: mcp.LoggingLevelDebug, ch: make(chan mcp.JSONRPCNotification, 8)}
	for _, s := range []*logSession{debug, errs, gone} {
		if err := fe.mcp.RegisterSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	fe.mcp.UnregisterSession(ctx, "gone")

	fe.Notify("notifications/message", []byte(`{"level":"info","logger":"up","data":"warming"}`))
	fe.Notify("notifications/message", []byte(`{"level":"critical","data":"disk full"}`))
	fe.Notify("notifications/message", []byte(`{"level":"nonsense","data":"?"}`))

	levels := func(s *logSession) []string {
		var out []string
		for {
			select {
			case n := <-s.ch:
				if n.Method != "notifications/message" {
					t.Errorf("%s got %s", s.id, n.Method)
				}
				l, _ := n.Params.AdditionalFields["level"].(string)
				out = append(out, l)
			default:
				return out
			}
		}
	}
	if got := levels(debug); len(got) != 2 || got[0] != "info" || got[1] != "critical" {
		t.Errorf("debug session got %v; want [info critical]", got)
	}
	if got := levels(errs); len(got) != 1 || got[0] != "critical" {
		t.Errorf("error session got %v; want [critical]", got)
	}
	if got := levels(gone); len(got) != 0 {
		t.Errorf("an unregistered session got %v", got)
	}
}
