#!/usr/bin/env python3
"""Makes an export of REDMAX's matlab/ folder parse and run under Octave 7 (in place):
- `methods (Abstract)` blocks become plain methods that raise (Octave rejects signatures
  without bodies outside @-folders: "external methods are only allowed in @-folders");
- `methods (Access = protected|private)` become public (Octave refuses a superclass's
  protected method called from a subclass instance the way REDMAX calls them);
- testRedMax.m writes t, T, V and the state y of every step to h<scene>.txt beside the run
  instead of plotting them (its plotH branch), for step-by-step comparison."""
import glob
import os
import re
import sys

root = sys.argv[1]
for path in glob.glob(os.path.join(root, '+redmax', '*.m')):
    text = open(path).read()
    text = re.sub(r'methods\s*\(\s*Access\s*=\s*(protected|private)\s*\)', 'methods', text)
    out, abstract = [], False
    for line in text.split('\n'):
        stripped = line.strip()
        if re.match(r'methods\s*\(\s*Abstract', stripped):
            abstract = True
            out.append(line.replace(stripped, 'methods'))
        elif abstract and stripped == 'end':
            abstract = False
            out.append(line)
        elif abstract and stripped and not stripped.startswith('%'):
            signature = stripped.split('%')[0].strip().rstrip(';')
            out += ['\t\tfunction ' + signature, "\t\t\terror('abstract');", '\t\tend']
        else:
            out.append(line)
    open(path, 'w').write('\n'.join(out))

driver = os.path.join(root, 'testRedMax.m')
text = open(driver).read()
plot = "if plotH\n\tclf;"
if plot not in text:
    sys.exit('octave_compatible.py: testRedMax.m is not the expected version (no plotH block)')
text = text.replace(plot, "dlmwrite(sprintf('h%d.txt', sceneID), [t(:) T(:) V(:) y], 'precision', 17);\nif false\n\tclf;")
open(driver, 'w').write(text)
