package jsclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/kstranded/kstranded/internal/exitcode"
)

// release is a release number of the npm package; anything else (head, a patch, a
// branch) is not something npm installs by name.
var release = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// tools are what `npm install` needs to compile the addon against the system's
// librdkafka dependencies (CKJS_LINKING=dynamic).
var tools = []string{"node", "npm", "gcc", "g++", "make", "python3"}

// CacheRoot is where installs live: $KSTRANDED_CACHE, else the user's cache directory's
// kstranded (~/.cache/kstranded on Linux, as testenv/jsclient/install.sh writes it).
func CacheRoot() (string, error) {
	if d := os.Getenv("KSTRANDED_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the real client (set KSTRANDED_CACHE): %w", err)
	}
	return filepath.Join(d, "kstranded"), nil
}

// Ensure returns the directory holding release version of @confluentinc/kafka-javascript
// (its node_modules is the NODE_PATH scenario.js runs with), installing it with npm the
// first time: about two minutes on two cores, compiled; a cached install (the file
// .installed in it, as install.sh leaves it) is reused at once. npm's output goes to
// log. A version that is not a release number is a usage error; a missing tool is named.
func Ensure(ctx context.Context, version string, log io.Writer) (string, error) {
	if !release.MatchString(version) {
		return "", exitcode.Usagef("--client %s: the real client is installed from npm by release number (X.Y.Z, e.g. 1.10.1); %q is not one", version, version)
	}
	root, err := CacheRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "jsclient-"+version)
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return dir, nil
	}
	// One install of a release at a time, whoever asks (this process, another one, or
	// install.sh): the second waits and then finds the first's install.
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	lock, err := lockInstall(ctx, dir+".lock")
	if err != nil {
		return "", fmt.Errorf("waiting for another install of @confluentinc/kafka-javascript@%s (%s.lock): %w", version, dir, err)
	}
	defer lock.Close()
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err == nil {
		return dir, nil
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return "", fmt.Errorf("installing @confluentinc/kafka-javascript@%s: %s is missing (the real client is compiled from npm: it needs Node.js, npm, gcc/g++, make, python3 and libzstd-dev liblz4-dev libsasl2-dev libcurl4-openssl-dev)", version, t)
		}
	}
	if log == nil {
		log = io.Discard
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	pkg := fmt.Sprintf("{\"name\":\"kstranded-jsclient-%s\",\"private\":true,\"version\":\"0.0.0\"}\n", version)
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		return "", err
	}
	npm := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--cache", filepath.Join(root, "npm"),
		"--loglevel=error", "@confluentinc/kafka-javascript@"+version)
	npm.Dir, npm.Stdout, npm.Stderr = dir, log, log
	npm.Env = append(os.Environ(), "CKJS_LINKING=dynamic")
	if err := npm.Run(); err != nil {
		return "", fmt.Errorf("npm install @confluentinc/kafka-javascript@%s in %s: %w", version, dir, err)
	}
	check := exec.CommandContext(ctx, "node", "-e", "require('@confluentinc/kafka-javascript')")
	check.Dir, check.Stdout, check.Stderr = dir, log, log
	if err := check.Run(); err != nil {
		return "", fmt.Errorf("@confluentinc/kafka-javascript@%s installed in %s does not load: %w", version, dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), nil, 0o644); err != nil {
		return "", err
	}
	return dir, nil
}

// ErrNoNode is returned by Run when node is not on PATH.
var ErrNoNode = errors.New("node is missing (the real client runs on Node.js)")
