# claimqueue: PGXS is the build of record (make, make install, make installcheck).
EXTENSION   = claimqueue
EXTVERSION  = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" claimqueue.control)
MODULE_big  = claimqueue

# The source list is the src/ tree itself; CMakeLists.txt globs the same tree.
SRCS        = $(sort $(wildcard src/*.cpp src/*/*.cpp))
OBJS        = $(SRCS:.cpp=.o)

# The SQL scripts are built from one source, src/sql (src/sql/README.md), by
# src/sql/build.sh into build/sql: the install script of this version and one
# upgrade script from each earlier release straight to it.
# (build.sh's complaints, if any, come from the rules below, once.)
SQL_RELEASES := $(shell sh src/sql/build.sh releases $(EXTVERSION) 2>/dev/null)
SQL_INSTALL  = build/sql/$(EXTENSION)--$(EXTVERSION).sql
SQL_UPGRADES = $(foreach v,$(SQL_RELEASES),build/sql/$(EXTENSION)--$(v)--$(EXTVERSION).sql)
SQL_SOURCES  = src/sql/build.sh $(wildcard src/sql/*.sql src/sql/api/*.sql src/sql/updates/*.sql)
DATA_built   = $(SQL_INSTALL) $(SQL_UPGRADES)
DOCS         = README.md

# One pg_regress file per SQL function or concern (sql/NAME.sql, expected/NAME.out);
# REGRESS_SKIP=NAME... leaves some out (scripts/test.sh's busy_reaper suite).
REGRESS      = $(filter-out $(REGRESS_SKIP),$(basename $(notdir $(sort $(wildcard sql/*.sql)))))
REGRESS_OPTS = --inputdir=. --load-extension=claimqueue

# Isolation specs live under test/isolation (specs/ and expected/).
ISOLATION      = $(basename $(notdir $(sort $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=claimqueue

# Perl TAP suites (PostgreSQL::Test::Cluster): each starts servers of its own,
# as the user running make (initdb refuses root; scripts/test.sh handles that).
TAP_TESTS    = 1
PROVE_TESTS  = $(sort $(wildcard test/perl/*.pl))

# The version is written once, in the control file; the library knows it as
# CLAIMQUEUE_VERSION (the schema its statements are written for). It also
# serves the release before it, CLAIMQUEUE_PREVIOUS_VERSION: where the last
# update part starts (src/engine/schema_version.hpp, rolling restarts).
EXTPREVIOUS = $(lastword $(SQL_RELEASES))
PG_CPPFLAGS = -I$(srcdir)/src -DCLAIMQUEUE_VERSION='"$(EXTVERSION)"' \
              -DCLAIMQUEUE_PREVIOUS_VERSION='"$(EXTPREVIOUS)"'
PG_CXXFLAGS = -std=c++17 -Wno-register
SHLIB_LINK  = -lstdc++

EXTRA_CLEAN = results output_iso regression.diffs regression.out tmp_check build/sql

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)

# JIT inlining gains nothing for SPI-bound functions; skip the LLVM bitcode
# step so the build needs no clang.
override with_llvm = no
# Rebuild objects when a header they include changes (dependency files in .deps/).
override autodepend = yes

include $(PGXS)

# The one object that uses the versions is rebuilt when they change.
src/engine/schema_version.o: claimqueue.control $(wildcard src/sql/updates/*.sql)

# The version goes to the SQL build as it goes to the compiler; build.sh fails
# unless src/sql/updates chains every release up to it.
$(SQL_INSTALL): $(SQL_SOURCES) claimqueue.control
	@mkdir -p $(@D)
	sh src/sql/build.sh install $(EXTVERSION) >$@.tmp || { rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

$(SQL_UPGRADES): build/sql/$(EXTENSION)--%--$(EXTVERSION).sql: $(SQL_SOURCES) claimqueue.control
	@mkdir -p $(@D)
	sh src/sql/build.sh upgrade $* $(EXTVERSION) >$@.tmp || { rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

.PHONY: unit test demo
unit:
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 && ctest --test-dir build --output-on-failure -L unit

# The PGXN release: claimqueue-VERSION.zip of the committed tree (HEAD), one
# top directory with META.json in it, as `pgxn install` takes it (make, make
# install). The benchmark and CI files stay out. test/pgxn/run.sh builds and
# installs it from a clean directory.
DIST_ZIP = $(EXTENSION)-$(EXTVERSION).zip
.PHONY: dist
dist:
	git archive --format=zip --prefix=$(EXTENSION)-$(EXTVERSION)/ -o $(DIST_ZIP) HEAD -- . ':(exclude)bench' ':(exclude).ci'
	@echo "$(DIST_ZIP): $$(unzip -l $(DIST_ZIP) | tail -1 | awk '{print $$2}') files"
