package main

import (
	"errors"
	"io"
)

func render(_ []string, _, _ io.Writer) error {
	return errors.New("render is not wired yet")
}
