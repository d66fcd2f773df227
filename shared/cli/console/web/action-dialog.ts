/**
 * The dialog every action goes through: what it will do, the reason the audit trail keeps (required), any choice
 * the action takes (a subscriber, a rate) and, for what cannot be undone, the id typed again. A modal `<dialog>`:
 * focus stays in it, Escape closes it, every field has its label.
 */
import { html } from 'htm/preact';
import type { ComponentChildren, VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Notice } from './page-parts.ts';

/** A choice the action takes besides its reason. */
export interface DialogField {
  readonly name: string;
  readonly label: string;
  readonly kind: 'text' | 'number' | 'select';
  readonly initial: string;
  /** For a select: its options, value and label. */
  readonly options?: readonly { readonly value: string; readonly label: string }[];
  /** A line under the field. */
  readonly hint?: string;
}

/** What the dialog asks and does. */
export interface ActionDialogProps {
  readonly title: string;
  readonly description?: ComponentChildren;
  readonly confirmLabel: string;
  readonly fields?: readonly DialogField[];
  /** Text the operator must type again before the action can go (an aggregate's id before its erase). */
  readonly confirmText?: string;
  /** Does the action with the fields' values (`reason` among them); its error is shown in the dialog. */
  readonly onSubmit: (values: Readonly<Record<string, string>>) => Promise<void>;
  readonly onClose: () => void;
}

/** Dialogs opened so far: each gets ids of its own for its labels. */
let dialogs = 0;

function nextDialogId(): string {
  dialogs += 1;
  return `dialog-${dialogs}`;
}

/** The action's dialog, open while it is rendered. */
export function ActionDialog(props: ActionDialogProps): VNode {
  const dialog = useRef<HTMLDialogElement>(null);
  const [id] = useState(nextDialogId);
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries([
      ['reason', ''],
      ['confirm', ''],
      ...(props.fields ?? []).map((field) => [field.name, field.initial]),
    ]),
  );
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const element = dialog.current;
    if (element !== null && !element.open) element.showModal();
    return () => element?.close();
  }, []);

  const set = (name: string) => (event: Event) =>
    setValues((previous) => ({ ...previous, [name]: (event.target as HTMLInputElement).value }));
  const confirmed = props.confirmText === undefined || values.confirm === props.confirmText;
  const ready = (values.reason ?? '').trim() !== '' && confirmed && !busy;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (!ready) return;
    setBusy(true);
    setError(undefined);
    try {
      await props.onSubmit(values);
      props.onClose();
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
      setBusy(false);
    }
  };

  return html`<dialog ref=${dialog} class="action-dialog" aria-labelledby=${`${id}-title`} onClose=${props.onClose}>
    <form onSubmit=${submit}>
      <h2 id=${`${id}-title`}>${props.title}</h2>
      ${props.description === undefined ? null : html`<div class="dialog-description">${props.description}</div>`}
      ${(props.fields ?? []).map(
        (field) => html`<div class="field">
          <label for=${`${id}-${field.name}`}>${field.label}</label>
          ${
            field.kind === 'select'
              ? html`<select id=${`${id}-${field.name}`} value=${values[field.name]} onChange=${set(field.name)}>
                  ${(field.options ?? []).map((option) => html`<option value=${option.value}>${option.label}</option>`)}
                </select>`
              : html`<input
                  id=${`${id}-${field.name}`}
                  type=${field.kind}
                  value=${values[field.name]}
                  onInput=${set(field.name)}
                  ...${field.kind === 'number' ? { min: '0.1', max: '1000', step: 'any', inputmode: 'decimal' } : {}}
                />`
          }
          ${field.hint === undefined ? null : html`<p class="hint">${field.hint}</p>`}
        </div>`,
      )}
      <div class="field">
        <label for=${`${id}-reason`}>Reason (kept in the audit trail)</label>
        <textarea id=${`${id}-reason`} required rows="2" value=${values.reason} onInput=${set('reason')}></textarea>
      </div>
      ${
        props.confirmText === undefined
          ? null
          : html`<div class="field">
              <label for=${`${id}-confirm`}>Type <code>${props.confirmText}</code> to confirm</label>
              <input id=${`${id}-confirm`} type="text" autocomplete="off" value=${values.confirm} onInput=${set('confirm')} />
            </div>`
      }
      ${error === undefined ? null : html`<${Notice} kind="error">${error}<//>`}
      <div class="dialog-buttons">
        <button type="button" class="secondary" onClick=${props.onClose}>Close</button>
        <button type="submit" disabled=${!ready}>${busy ? 'Working…' : props.confirmLabel}</button>
      </div>
    </form>
  </dialog>`;
}
