# Two commands for a fresh clone: `make lab` opens the lab, `make test` runs every test.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab test env clean browser-test binder-check classroom-env learners-env

# uv installs the same pins as pip would, in seconds rather than a minute (it resolves and unpacks in parallel).
UV_PIN := uv==0.13.9
UV     := $(VENV)/bin/uv pip install --quiet --python $(PY)

$(STAMP): requirements.txt pyproject.toml Makefile binder/lab_environment.sh
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet $(UV_PIN)
	$(UV) --compile-bytecode -r requirements.txt
	$(UV) --no-deps -e .
	bash binder/lab_environment.sh $(PY)
	touch $(STAMP)

# The lab's JupyterLab settings (no news pop-ups; notebooks before other files; widgets' messages on the kernel's
# main shell, not a subshell of their own: a subshell's every message reported the kernel idle while a cell waited on
# a form, and after an interrupt still ran), where JupyterLab reads them: the same file Binder's postBuild installs.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json

$(LAB_SETTINGS): binder/overrides.json | $(STAMP)
	bash binder/lab_environment.sh $(PY)

env: $(STAMP) $(LAB_SETTINGS)

# Root (as in containers) must say so to Jupyter; everyone else gets the plain command.
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

# `make lab LANG=zh_CN` (or a Chinese locale) opens the Chinese edition, JupyterLab's menus in Chinese too.
START := $(if $(filter zh%,$(LANG)),zh-CN/notebooks/00_start_here.ipynb,notebooks/00_start_here.ipynb)

# The server's root is the repo (lessons and solutions in its file browser); the URL it opens and prints opens
# lesson 00 through the lab's server extension, which sets JupyterLab's language to the edition's (labkit/_lab_edition.py).
lab: $(STAMP) $(LAB_SETTINGS)
	$(VENV)/bin/jupyter lab $(ROOT_FLAG) --ServerApp.root_dir=. --LabApp.default_url=/labkit/open/$(START)

# The tests (four suites) and the notebooks (English, Chinese) as six pytest runs, four at a time; each prints
# its command. `make test SUITES="notebooks notebooks-zh-CN"` runs only the suites named; CI adds the browser's
# two (`browser-classroom`, `browser`).
test: $(STAMP)
	$(PY) tools/run_tests.py $(SUITES)

browser-test: $(STAMP)
	bash .ci/browser.sh

# A room's hub on this machine (classroom/README.md): JupyterHub and its idle culler into the venv, and its proxy
# (configurable-http-proxy, npm) outside the repository, where `classroom.proxy_command` finds it.
CHP_HOME := $(or $(LABKIT_NPM_CACHE),$(HOME)/.cache/labkit-npm)/chp
classroom-env: $(STAMP)
	$(UV) -r classroom/requirements.txt
	mkdir -p "$(CHP_HOME)"
	bash -c 'source .ci/npm_once.sh && npm_once "$(CHP_HOME)" "$(CHP_HOME).log" \
	  configurable-http-proxy@$$($(PY) -c "import classroom; print(classroom.CHP_VERSION)")'

# The lab for every OS user of a hub machine (its learners; the two-user isolation test): a venv made from the
# system's Python, which any user may run. The lab's own venv points at the Python it was made from, which may live
# where only its owner may go (pyenv's, under /root). Run as root; `LABKIT_LEARNER_PYTHON` is then its bin/python.
LEARNERS_VENV ?= /opt/mcp-lab-learners
LEARNERS_BASE ?= $(firstword $(wildcard /usr/bin/python3.11 /usr/bin/python3))
learners-env: $(STAMP)
	$(LEARNERS_BASE) -m venv --without-pip "$(LEARNERS_VENV)"
	$(VENV)/bin/uv pip install --quiet --python "$(LEARNERS_VENV)/bin/python" -r requirements.txt \
	  -r classroom/requirements.txt
	$(VENV)/bin/uv pip install --quiet --python "$(LEARNERS_VENV)/bin/python" --no-deps -e .
	bash binder/lab_environment.sh "$(LEARNERS_VENV)/bin/python"
	chmod -R a+rX "$(LEARNERS_VENV)"

binder-check:
	bash .ci/binder_check.sh

clean:
	rm -rf $(VENV) data out
