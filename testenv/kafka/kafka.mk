# Makefile fragment for the real-Kafka test environment (testenv/kafka).
# Include it from the top-level Makefile:
#
#   include testenv/kafka/kafka.mk
#
# Targets:
#   kafka-up     start the broker (prints/writes KSTRANDED_TEST_* to $(KAFKA_STATE_DIR)/env)
#   kafka-down   stop it and remove its state dir
#   kafka-libs   only fetch the Kafka jars from Maven Central into testenv/kafka/.libs
#   test-kafka   kafka-up, run $(KAFKA_TEST_CMD) with the KSTRANDED_TEST_* variables
#                exported, then kafka-down whatever the outcome; exits with the
#                test command's status

# Directory of this file, fixed at include time (MAKEFILE_LIST changes later).
KAFKA_TESTENV_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
KAFKA_STATE_DIR ?= $(KAFKA_TESTENV_DIR)/.state
KAFKA_TEST_CMD ?= go test -count=1 ./...

# The scripts read KAFKA_STATE_DIR from the environment.
KAFKA_TESTENV_SH = KAFKA_STATE_DIR='$(KAFKA_STATE_DIR)' bash

.PHONY: kafka-libs kafka-up kafka-down test-kafka

kafka-libs:
	@$(KAFKA_TESTENV_SH) '$(KAFKA_TESTENV_DIR)/fetch-libs.sh'

kafka-up:
	@$(KAFKA_TESTENV_SH) '$(KAFKA_TESTENV_DIR)/up.sh'

kafka-down:
	@$(KAFKA_TESTENV_SH) '$(KAFKA_TESTENV_DIR)/down.sh'

# One shell: the EXIT trap stops the broker however the recipe ends (test
# failure, up.sh failure, ^C); INT/TERM turn into an exit so the trap runs.
# The status of the recipe is the test command's (or up.sh's).
test-kafka:
	@trap '$(KAFKA_TESTENV_SH) "$(KAFKA_TESTENV_DIR)/down.sh"' EXIT; \
	trap 'exit 130' INT; trap 'exit 143' TERM; \
	$(KAFKA_TESTENV_SH) '$(KAFKA_TESTENV_DIR)/up.sh' || exit $$?; \
	set -a; . '$(KAFKA_STATE_DIR)/env'; set +a; \
	echo "kafka-testenv: running: $(KAFKA_TEST_CMD)"; \
	$(KAFKA_TEST_CMD); status=$$?; \
	exit $$status
