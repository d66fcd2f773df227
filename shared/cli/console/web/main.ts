/** The console page's entry: the app rendered into the page the console served. */
import { html } from 'htm/preact';
import { render } from 'preact';
import { App } from './app.ts';
import { interceptLinks } from './router.ts';

const root = document.getElementById('app');
if (root !== null) {
  root.textContent = '';
  interceptLinks();
  render(html`<${App} />`, root);
}
