// kubernetes.core modules under ansible-playbook and kplay on the same fixtures: shard 3 of 3 of the
// suite in test/integration/kcore-parity.ts (its header says what is compared).
import { kcoreParity } from './kcore-parity.js';

kcoreParity(3, 3);
