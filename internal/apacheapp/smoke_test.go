package apacheapp

import (
	"testing"
	"time"
)

func TestSmokePi(t *testing.T) {
	w := newWorld(t, piYAML)
	w.settle()
	t.Log(w.history())
	w.driverRunning(false)
	w.settle()
	w.driverRunning(true)
	w.settle()
	t.Log(w.history())
	w.executors(2, 2)
	w.advance(20 * time.Second)
	w.driverExited(0, "Completed")
	w.settle()
	t.Log(w.history(), w.children)
	w.advance(20 * time.Second)
	w.settle()
	t.Log(w.history(), w.app.Status.Conditions)
}
