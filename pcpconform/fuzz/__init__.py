"""``pcpconform fuzz``: a structure-aware fuzzer driven by the record schemas.

* ``mutators``: mutations of archives (per field, record and file), MMV files and
  derived-metric config files, chosen from each field's type and meaning;
* ``layout``: where each field of a record lies, walked from its schema once per record
  shape; ``fields``: a field mutation as a byte patch at that offset, counts kept in step;
* ``seeds``: the valid inputs mutations start from;
* ``targets``: running a command on a mutant, without a shell, in a private directory under
  time and memory limits (optionally inside a chroot);
* ``oracles``: crash, hang, memory blow-up and differential findings, and the feedback key;
* ``findings``: signatures, deduplication and the findings directory;
* ``shrink``: delta debugging of a finding to a minimal reproducer;
* ``campaign``: the loop (seeded, batched, -j workers or Dask), resumable;
* ``promote``: a finding as a corpus case.
"""
