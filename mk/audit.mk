# Privacy audit (issue 5): empirical ε lower bounds for every registered mechanism and the negative controls,
# regenerating the tables in docs/privacy.md. Cross-checks against dp-accounting: tests/test_privacy_crosscheck.py.
AUDIT_TRIALS ?= 20000
AUDIT_MAX_SECONDS ?= 20
AUDIT_BUILTIN = adassp linmix ihm dpgd

.PHONY: audit audit-controls privacy-doc audit-plots test-privacy

audit:
	$(DPBENCH) audit --all --trials $(AUDIT_TRIALS) --max-seconds $(AUDIT_MAX_SECONDS)

audit-controls:
	$(DPBENCH) audit $(AUDIT_BUILTIN) --negative-controls --trials $(AUDIT_TRIALS)

privacy-doc:
	$(DPBENCH) audit $(AUDIT_BUILTIN) ols --trials $(AUDIT_TRIALS) --write-doc docs/privacy.md --doc-block spec004
	$(DPBENCH) audit --all --trials $(AUDIT_TRIALS) --max-seconds $(AUDIT_MAX_SECONDS) --write-doc docs/privacy.md
	-$(DPBENCH) audit $(AUDIT_BUILTIN) --negative-controls --trials $(AUDIT_TRIALS) \
		--write-doc docs/privacy.md --doc-block controls
	-$(DPBENCH) audit --all --negative-controls --trials 5000 --max-seconds 8 \
		--write-doc docs/privacy.md --doc-block controls-generic

# example histograms of the audit statistic (honest vs noise ÷ 10), shown in docs/privacy.md
audit-plots:
	$(DPBENCH) audit adassp dpgd -e 2 --trials $(AUDIT_TRIALS) --plot docs/figures/audit
	-$(DPBENCH) audit adassp dpgd -e 2 --trials $(AUDIT_TRIALS) --broken noise_div10 --plot docs/figures/audit

test-privacy:
	$(PYTHON) -m pytest -q tests/test_privacy.py tests/test_privacy_crosscheck.py tests/test_audit.py tests/test_properties.py
