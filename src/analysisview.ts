/**
 * The analyses panels (stages of kind `analysis`), by the analysis's name: cost
 * (before vs after optimization, each figure named for people, with a legend)
 * and memory (a table and a chart of its breakdown); an analysis this viewer does
 * not know gets a note saying so. They do not take part in line linking.
 */
import { h } from './dom';
import { unsupportedBox } from './header';
import { IReport, IStageInfo } from './model';
import { IPanelView } from './panel';
import { costLegendBox, costTable, memoryChart, memoryTable } from './tables';

export class AnalysisView implements IPanelView {
  constructor(
    private readonly info: IStageInfo,
    private readonly report: IReport,
    private readonly parent: HTMLElement
  ) {
    this.stage = info.name;
  }

  readonly stage: string;

  show(): void {
    if (this._built) {
      return;
    }
    this._built = true;
    if (this.stage === 'cost') {
      this.parent.appendChild(
        h(
          'div',
          { class: 'olympus-table-wrap' },
          costTable(this.report),
          costLegendBox(this.report)
        )
      );
    } else if (this.stage !== 'memory') {
      this.parent.appendChild(unsupportedBox(this.info));
    } else {
      this.parent.appendChild(
        h(
          'div',
          { class: 'olympus-memory' },
          h('div', { class: 'olympus-table-wrap' }, memoryTable(this.report)),
          h('div', { class: 'olympus-chart-wrap' }, memoryChart(this.report))
        )
      );
    }
  }

  apply(): void {
    // Analyses are about the whole program: nothing to light up.
  }

  focus(): void {
    const table = this.parent.querySelector('table');
    if (table) {
      table.tabIndex = -1;
      table.focus();
    }
  }

  dispose(): void {
    this.parent.textContent = '';
  }

  private _built = false;
}
