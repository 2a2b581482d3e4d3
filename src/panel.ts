/**
 * What the layout asks of every panel's view (source, stage texts, analyses).
 */
import { ISelection } from './hub';

export interface IPanelView {
  readonly stage: string;
  /** Builds what is expensive (the editor) the first time the panel is shown. */
  show(): void;
  /** Follows the hub's selection. */
  apply(selection: ISelection): void;
  /** Gives keyboard focus to the panel's content. */
  focus(): void;
  dispose(): void;
}
