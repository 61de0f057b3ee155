"""
A stand-in for ADCMEKit.jl (which cannot be installed here) for ADCME's tutorial code: its views
are DevPlace's own (`lineview`, `meshview`, `gradview`, ...; src/adcme/kit.jl), exported again
under this name so that `using ADCMEKit` runs. Push this folder's parent onto `LOAD_PATH` to use it.
"""
module ADCMEKit

using DevPlace

export lineview, meshview, pcolormeshview, gradview, jacview, PCLview, animate, saveanim

end # module
