import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';

type Value = string | number;

/**
 * The search attributes that change while a workflow runs. `set` collects a value; `flush` sends
 * what changed since the last upsert (or since the start options) as ONE upsert, and nothing when
 * nothing changed. Call flush right before the command that follows (the next activity, the
 * workflow's completion), so the upsert rides in that workflow task: each upsert is one history
 * event, and a workflow task of its own would be three more.
 */
export class ChangingAttributes {
  private readonly sent = new Map<string, Value>();
  private readonly pending = new Map<string, SearchAttributeUpdatePair>();

  constructor() {
    // What the start options set counts as sent: the first flush does not repeat it.
    const start = workflowInfo().typedSearchAttributes;
    for (const { key, value } of start.getAll()) {
      if (typeof value === 'string' || typeof value === 'number') this.sent.set(key.name, value);
    }
  }

  set(key: SearchAttributeUpdatePair['key'], value: Value): this {
    if (this.sent.get(key.name) === value) this.pending.delete(key.name);
    else this.pending.set(key.name, { key, value } as SearchAttributeUpdatePair);
    return this;
  }

  flush(): void {
    if (this.pending.size === 0) return;
    const pairs = [...this.pending.values()];
    this.pending.clear();
    for (const p of pairs) this.sent.set(p.key.name, p.value as Value);
    upsertSearchAttributes(pairs);
  }
}
