// Command testworkload is the container actorlet's tests run. With no
// configuration it prints "testworkload: started" and sleeps until SIGTERM
// or SIGINT, then exits 0.
//
// Behaviour is set by flags or, so pod manifests can set it easily, by
// environment variables named TW_ plus the flag name in upper case with
// dashes as underscores (flags win over the environment):
//
//	--exit-code N            exit status when --exit-after fires (TW_EXIT_CODE; default 0)
//	--exit-after DUR         exit after DUR, e.g. 200ms (TW_EXIT_AFTER; default never)
//	--http ADDR              serve HTTP on ADDR, e.g. :8080 (TW_HTTP; default off)
//	--healthz-fail-after DUR /healthz fails after DUR (TW_HEALTHZ_FAIL_AFTER; default never)
//	--ignore-sigterm         ignore SIGTERM, so only SIGKILL stops it (TW_IGNORE_SIGTERM)
//	--term-delay DUR         on SIGTERM, drain for DUR, then exit 0 (TW_TERM_DELAY; default 0)
//	--log-every DUR          print a line to stdout every DUR (TW_LOG_EVERY; default off)
//	--burn-cpu N             keep N CPUs busy with N spinning threads (TW_BURN_CPU; default 0)
//	--alloc-mib N            allocate N MiB at start, write every page and keep it (TW_ALLOC_MIB; default 0)
//
// The HTTP server answers GET /healthz with 200 "ok" while healthy and 500
// "failing" once failed; GET /fail makes it fail and GET /recover healthy
// again.
//
// "testworkload check --file PATH" exits 0 if PATH exists and 1 otherwise,
// for exec probes; "testworkload touch --file PATH [--content S]" creates
// PATH (holding S when given).
// "testworkload id" prints "uid=U gid=G groups=G1,G2" (its supplemental
// groups, sorted); "testworkload ps" prints one "PID COMM" line per
// process it can see in /proc (its PID namespace's).
// "testworkload mkdir --dir PATH" creates directory PATH (for seccomp
// tests: the mkdirat(2) system call) and prints "mkdir PATH: ok" (exit 0), "mkdir PATH: EPERM" (exit
// 13) or "mkdir PATH: <error>" (exit 1).
// "testworkload tty" reports its terminal, for exec -it tests: see
// ttyCommand.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sigs receives SIGTERM and SIGINT. It is set up during package
// initialisation, as early as a Go program can, because until then Go's
// default action applies (exit status 2), even with --ignore-sigterm.
var sigs = notify()

func notify() chan os.Signal {
	c := make(chan os.Signal, 4)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	return c
}

type config struct {
	exitCode         int
	exitAfter        time.Duration
	httpAddr         string
	healthzFailAfter time.Duration
	ignoreSIGTERM    bool
	termDelay        time.Duration
	logEvery         time.Duration
	burnCPU          int
	allocMiB         int
}

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "check" || os.Args[1] == "touch") {
		os.Exit(fileCommand(os.Args[1], os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "mkdir" {
		os.Exit(mkdirCommand(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "tty" {
		os.Exit(ttyCommand(os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == "id" {
		os.Exit(idCommand())
	}
	if len(os.Args) > 1 && os.Args[1] == "ps" {
		os.Exit(psCommand())
	}
	cfg, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "testworkload:", err)
		os.Exit(2)
	}
	os.Exit(run(cfg))
}

// parse reads flags, with TW_* environment variables as defaults.
func parse(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("testworkload", flag.ContinueOnError)
	fs.IntVar(&c.exitCode, "exit-code", 0, "exit status when --exit-after fires")
	fs.DurationVar(&c.exitAfter, "exit-after", 0, "exit after this long (0: never)")
	fs.StringVar(&c.httpAddr, "http", "", "serve /healthz, /fail, /recover on this address")
	fs.DurationVar(&c.healthzFailAfter, "healthz-fail-after", 0, "/healthz fails after this long (0: never)")
	fs.BoolVar(&c.ignoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM")
	fs.DurationVar(&c.termDelay, "term-delay", 0, "on SIGTERM, keep running this long, then exit 0")
	fs.DurationVar(&c.logEvery, "log-every", 0, "print a line this often (0: never)")
	fs.IntVar(&c.burnCPU, "burn-cpu", 0, "keep this many CPUs busy")
	fs.IntVar(&c.allocMiB, "alloc-mib", 0, "allocate and touch this many MiB, and keep them")
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "TW_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	return c, fs.Parse(args)
}

// run does what c says and returns the exit status.
func run(c config) int {
	start := time.Now()
	fmt.Printf("testworkload: started pid=%d\n", os.Getpid())

	for range c.burnCPU {
		go burn()
	}
	held := allocate(c.allocMiB)
	defer runtime.KeepAlive(held)
	if c.allocMiB > 0 {
		fmt.Printf("testworkload: holding %d MiB\n", c.allocMiB)
	}

	var healthy atomic.Bool
	healthy.Store(true)
	if c.httpAddr != "" {
		go serve(c.httpAddr, &healthy)
	}

	var exitC, failC, tickC <-chan time.Time
	if c.exitAfter > 0 {
		exitC = time.After(c.exitAfter)
	}
	if c.healthzFailAfter > 0 {
		failC = time.After(c.healthzFailAfter)
	}
	if c.logEvery > 0 {
		t := time.NewTicker(c.logEvery)
		defer t.Stop()
		tickC = t.C
	}
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGTERM && c.ignoreSIGTERM {
				fmt.Println("testworkload: ignoring SIGTERM")
				continue
			}
			if sig == syscall.SIGTERM && c.termDelay > 0 {
				fmt.Printf("testworkload: %v, draining for %s\n", sig, c.termDelay)
				time.Sleep(c.termDelay)
			}
			fmt.Printf("testworkload: %v, exiting 0\n", sig)
			return 0
		case <-exitC:
			fmt.Printf("testworkload: exiting %d\n", c.exitCode)
			return c.exitCode
		case <-failC:
			fmt.Println("testworkload: healthz now failing")
			healthy.Store(false)
		case <-tickC:
			fmt.Printf("testworkload: alive %s\n", time.Since(start).Round(time.Millisecond))
		}
	}
}

// serve runs the health endpoints; a listen failure ends the process with
// status 2.
func serve(addr string, healthy *atomic.Bool) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		if healthy.Load() {
			fmt.Fprint(w, "ok")
			return
		}
		http.Error(w, "failing", http.StatusInternalServerError)
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) {
		healthy.Store(false)
		fmt.Fprint(w, "failing")
	})
	mux.HandleFunc("/recover", func(w http.ResponseWriter, _ *http.Request) {
		healthy.Store(true)
		fmt.Fprint(w, "ok")
	})
	err := http.ListenAndServe(addr, mux)
	fmt.Fprintln(os.Stderr, "testworkload: http:", err)
	os.Exit(2)
}

// fileCommand runs "check" (exit 0 if --file exists, else 1) or "touch"
// (create --file). Usage errors exit 2.
func fileCommand(name string, args []string) int {
	fs := flag.NewFlagSet("testworkload "+name, flag.ContinueOnError)
	path := fs.String("file", "", "file to "+name)
	content := fs.String("content", "", "what touch writes into the file")
	if err := fs.Parse(args); err != nil || *path == "" {
		fmt.Fprintf(os.Stderr, "usage: testworkload %s --file PATH\n", name)
		return 2
	}
	if name == "touch" {
		flags := os.O_CREATE | os.O_WRONLY
		if *content != "" {
			flags |= os.O_TRUNC
		}
		f, err := os.OpenFile(*path, flags, 0o644)
		if err == nil {
			_, err = f.WriteString(*content)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "testworkload:", err)
			return 1
		}
		return 0
	}
	if _, err := os.Stat(*path); err != nil {
		return 1
	}
	return 0
}

// mkdirEPERM is mkdirCommand's exit status when mkdir(2) fails with EPERM
// (e.g. denied by a seccomp profile).
const mkdirEPERM = 13

// mkdirCommand runs "mkdir --dir PATH" with os.Mkdir (the mkdirat(2)
// system call on Linux; a seccomp profile should deny mkdir and mkdirat)
// and prints the outcome.
func mkdirCommand(args []string) int {
	fs := flag.NewFlagSet("testworkload mkdir", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to create")
	if err := fs.Parse(args); err != nil || *dir == "" {
		fmt.Fprintln(os.Stderr, "usage: testworkload mkdir --dir PATH")
		return 2
	}
	err := os.Mkdir(*dir, 0o755)
	switch {
	case err == nil:
		fmt.Printf("mkdir %s: ok\n", *dir)
		return 0
	case errors.Is(err, syscall.EPERM):
		fmt.Printf("mkdir %s: EPERM\n", *dir)
		return mkdirEPERM
	default:
		fmt.Printf("mkdir %s: %v\n", *dir, err)
		return 1
	}
}

// idCommand prints the process's user, group and supplemental groups.
func idCommand() int {
	groups, err := os.Getgroups()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testworkload: getgroups:", err)
		return 1
	}
	slices.Sort(groups)
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = strconv.Itoa(g)
	}
	fmt.Printf("uid=%d gid=%d groups=%s\n", os.Getuid(), os.Getgid(), strings.Join(names, ","))
	return 0
}

// psCommand prints "PID COMM" for every process in /proc.
func psCommand() int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		fmt.Fprintln(os.Stderr, "testworkload:", err)
		return 1
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil {
			continue // gone since the listing
		}
		fmt.Printf("%s %s\n", e.Name(), strings.TrimSpace(string(comm)))
	}
	return 0
}

// burn spins forever on its own OS thread: one CPU busy.
func burn() {
	runtime.LockOSThread()
	x := uint64(1)
	for {
		x = x*6364136223846793005 + 1442695040888963407
		if x == 0 {
			fmt.Println(x) // never: keeps the loop from being optimised away
		}
	}
}

// allocate returns mib MiB with every page written, so all of it is
// resident (anonymous memory: counted in the working set).
func allocate(mib int) []byte {
	if mib <= 0 {
		return nil
	}
	b := make([]byte, mib<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	return b
}

// ttyCommand reports its terminal: "tty: stdin=<isatty> stdout=<isatty>
// size=<cols>x<rows>" at start, "tty: resized size=<cols>x<rows>" on each
// SIGWINCH, "tty: read <line>" for each line of input; the line "exit N"
// ends it with status N, the end of input (Ctrl-D), SIGINT (Ctrl-C) or
// SIGTERM with 0.
func ttyCommand(in, out *os.File) int {
	winch := make(chan os.Signal, 4)
	signal.Notify(winch, syscall.SIGWINCH) // before the first size: a resize is never missed
	size := func() string {
		ws, err := unix.IoctlGetWinsize(int(out.Fd()), unix.TIOCGWINSZ)
		if err != nil {
			return "none"
		}
		return fmt.Sprintf("%dx%d", ws.Col, ws.Row)
	}
	isatty := func(f *os.File) bool {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		return err == nil
	}
	fmt.Fprintf(out, "tty: stdin=%t stdout=%t size=%s\n", isatty(in), isatty(out), size())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- strings.TrimSpace(sc.Text())
		}
	}()
	for {
		select {
		case sig := <-sigs: // Ctrl-C on the terminal, or the container stopping
			fmt.Fprintf(out, "tty: %v\n", sig)
			return 0
		case <-winch:
			fmt.Fprintf(out, "tty: resized size=%s\n", size())
		case l, ok := <-lines:
			if !ok {
				return 0
			}
			fmt.Fprintf(out, "tty: read %s\n", l)
			var code int
			if n, _ := fmt.Sscanf(l, "exit %d", &code); n == 1 {
				return code
			}
		}
	}
}
