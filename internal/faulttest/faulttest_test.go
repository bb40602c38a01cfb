package faulttest

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestBlackholeAndHeal: an echo through the link answers; blackholed, a
// line sent gets no answer; healed, a new connection answers again (what
// was sent into the blackhole is dropped with its connection).
func TestBlackholeAndHeal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					_, _ = c.Write(append(sc.Bytes(), '\n'))
				}
			}()
		}
	}()
	l := New(t, "echo", ln.Addr().String())
	c, err := net.Dial("tcp", l.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	echo := func(msg string, within time.Duration) (string, error) {
		if _, err := c.Write([]byte(msg + "\n")); err != nil {
			return "", err
		}
		_ = c.SetReadDeadline(time.Now().Add(within))
		return rd.ReadString('\n')
	}
	if got, err := echo("one", 5*time.Second); err != nil || got != "one\n" {
		t.Fatalf("through the link: %q, %v", got, err)
	}
	l.Blackhole()
	if got, err := echo("two", 300*time.Millisecond); err == nil {
		t.Fatalf("blackholed link answered %q", got)
	}
	l.Heal()
	if c, err = net.Dial("tcp", l.Addr); err != nil {
		t.Fatal(err)
	}
	rd = bufio.NewReader(c)
	if got, err := echo("three", 5*time.Second); err != nil || got != "three\n" {
		t.Fatalf("after heal: %q, %v", got, err)
	}
}
