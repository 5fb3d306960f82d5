package skills

import (
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// debounce gathers a burst of file events (an editor's save, a git
// checkout) into one refresh.
const debounce = 100 * time.Millisecond

// watcher turns file events under the skills folders into refresh
// requests. It watches each root, team folder, skill folder and the
// skill's scripts/, hooks/, tools/ and pipelines/ folders (inotify is not
// recursive); what it misses, the periodic stat check catches.
type watcher struct {
	w      *fsnotify.Watcher
	events chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	watched map[string]bool
}

func newWatcher(l *Library) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{w: fw, events: make(chan struct{}, 1), done: make(chan struct{}), watched: map[string]bool{}}
	w.wg.Add(1)
	go w.loop(l)
	return w, nil
}

func (w *watcher) loop(l *Library) {
	defer w.wg.Done()
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-w.done:
			if timer != nil {
				timer.Stop()
			}
			return
		case _, ok := <-w.w.Events:
			if !ok {
				return
			}
			if timer == nil {
				timer = time.NewTimer(debounce)
			} else {
				timer.Reset(debounce)
			}
			fire = timer.C
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			l.log.Warn("skills watcher", "err", err)
		case <-fire:
			fire = nil
			select {
			case w.events <- struct{}{}:
			default:
			}
		}
	}
}

// sync makes the watch list match snap's folders.
func (w *watcher) sync(snap *Snapshot) {
	want := map[string]bool{}
	for _, sp := range snap.stamps {
		p := string(sp.path[:len(sp.path)-1])
		if filepath.Base(p) == FileName {
			p = filepath.Dir(p)
		}
		want[p] = true
	}
	for _, sk := range snap.skills {
		for _, sub := range []string{"scripts", "hooks", "tools", "pipelines"} {
			want[filepath.Join(sk.Dir, sub)] = true
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for p := range w.watched {
		if !want[p] {
			_ = w.w.Remove(p)
			delete(w.watched, p)
		}
	}
	for p := range want {
		if !w.watched[p] {
			if w.w.Add(p) == nil {
				w.watched[p] = true
			}
		}
	}
}

func (w *watcher) close() {
	close(w.done)
	_ = w.w.Close()
	w.wg.Wait()
}
