package fleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Proc is one running process.
type Proc struct {
	Name string
	Log  string // path of its combined stdout and stderr
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start runs bin with args and env (added to a minimal environment), its
// output going to logPath. The process is killed if this one dies.
func Start(name, bin string, args, env []string, logPath string) (*Proc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// startNice is Start at niceness nice (none when it is 0 or less), through
// nice(1), which then runs bin in its own place, keeping the pid, so that
// every thread of bin runs at that niceness.
func startNice(nice int, name, bin string, args, env []string, logPath string) (*Proc, error) {
	if nice <= 0 {
		return Start(name, bin, args, env, logPath)
	}
	path, err := exec.LookPath("nice")
	if err != nil {
		return nil, fmt.Errorf("start %s at niceness %d: %w", name, nice, err)
	}
	return Start(name, path, append([]string{"-n", strconv.Itoa(nice), bin}, args...), env, logPath)
}

// Pid returns the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Proc) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Pause stops the process with SIGSTOP: it keeps its connections and
// state but runs no code until Resume.
func (p *Proc) Pause() error { return p.Signal(syscall.SIGSTOP) }

// Resume continues a paused process with SIGCONT; it is harmless on a
// running one.
func (p *Proc) Resume() error { return p.Signal(syscall.SIGCONT) }

// Kill sends SIGKILL and waits for the process to exit.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exited reports whether the process has exited.
func (p *Proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Wait waits for exit and returns its error (nil for exit status 0).
func (p *Proc) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PeakRSS returns the process's peak resident set size in bytes; it is known
// once the process has exited.
func (p *Proc) PeakRSS() int64 {
	select {
	case <-p.done:
	default:
		return 0
	}
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}

// WaitReady polls url until it answers 200, the process exits or ctx ends.
// A server that is still binding its port sends no signal, so polling is the
// only way.
func (p *Proc) WaitReady(ctx context.Context, url string) error {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			log, _ := os.ReadFile(p.Log)
			return fmt.Errorf("%s exited before it was ready: %v\n%s", p.Name, p.err, tail(log, 2000))
		case <-ctx.Done():
			return errors.Join(ctx.Err(), fmt.Errorf("%s not ready at %s", p.Name, url))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
