# Privacy audit (issues 5, 15): white-box audit of every registered mechanism's releases (certified bound, GDP
# estimate, exact ε) with its 1.3×/3× controls, and the black-box audit of θ̂ with its ÷10 / no-bound / 10ε controls,
# regenerating the tables in docs/privacy.md. Cross-checks against dp-accounting: tests/privacy/test_privacy_crosscheck.py.
AUDIT_JOBS ?= 2
AUDIT_TRIALS ?= 20000
AUDIT_BUILTIN = adassp linmix ihm dpgd

.PHONY: audit audit-blackbox audit-controls privacy-doc audit-plots test-privacy

audit:
	$(DPBENCH) audit --all --controls --n-jobs $(AUDIT_JOBS)

audit-blackbox:
	$(DPBENCH) audit $(AUDIT_BUILTIN) --mode blackbox --trials $(AUDIT_TRIALS)

audit-controls:
	$(DPBENCH) audit $(AUDIT_BUILTIN) --negative-controls --trials $(AUDIT_TRIALS)

privacy-doc:
	$(DPBENCH) audit --all --controls --n-jobs $(AUDIT_JOBS) --write-doc docs/privacy.md
	-$(DPBENCH) audit $(AUDIT_BUILTIN) --negative-controls --trials $(AUDIT_TRIALS) \
		--write-doc docs/privacy.md --doc-block controls

# example histograms of the black-box audit statistic (honest vs noise ÷ 10), shown in docs/privacy.md
audit-plots:
	$(DPBENCH) audit adassp dpgd -e 2 --mode blackbox --trials $(AUDIT_TRIALS) --plot docs/figures/audit
	-$(DPBENCH) audit adassp dpgd -e 2 --trials $(AUDIT_TRIALS) --broken noise_div10 --plot docs/figures/audit

test-privacy:
	$(PYTHON) -m pytest -q tests/privacy/test_privacy.py tests/privacy/test_privacy_crosscheck.py tests/privacy/test_privacy_exact.py \
		tests/audit/test_audit.py tests/audit/test_audit_whitebox.py tests/audit/test_audit_mechanisms.py tests/test_properties.py
